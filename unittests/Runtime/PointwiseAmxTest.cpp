//===- PointwiseAmxTest.cpp - The AMX 1x1 convolution vs. a loop ----------===//
//
// PointwiseBf16Amx against a scalar loop on bf16 inputs (f32 sums, one
// rounding to bf16): MobileNet's channel counts (16 -> 96, 24 -> 144,
// 144 -> 24: chunks of 16 and 24), an output tail (20 of 32), pixel counts
// around the 32-pixel block (1, 31, 33, 100), bias, relu6, the residual
// sum, and two threads; 16 or fewer outputs, outputs ending 8 or 16 past
// a 32-channel block, a single block of pixels, 2-channel k chunks.
// Skipped where the CPU has no AMX.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/PointwiseAmx.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using gopt::runtime::cpu::pointwiseAmxEnabled;
using gopt::runtime::cpu::PointwiseBf16Amx;

namespace {

float widen(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

uint16_t narrow(float f) { // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

struct Case {
  int64_t k, n, pixels;
  bool bias, clamp, sum;
  int threads;
  float lo = 0, hi = 6;
};

void check(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "k " << c.k << " n " << c.n << " pixels " << c.pixels
               << " sum " << c.sum << " threads " << c.threads << " clamp "
               << c.clamp << " [" << c.lo << ", " << c.hi << "]");
  std::mt19937 rng(static_cast<unsigned>(c.k * 1000 + c.n + c.pixels));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<uint16_t> w(c.k * c.n), x(c.pixels * c.k), dst(c.pixels * c.n);
  for (auto &v : w)
    v = narrow(u(rng) / std::sqrt(float(c.k)));
  for (auto &v : x)
    v = narrow(3 * u(rng));
  for (auto &v : dst)
    v = narrow(u(rng));
  std::vector<float> bias;
  if (c.bias)
    for (int64_t o = 0; o < c.n; ++o)
      bias.push_back(u(rng));
  auto kernel = PointwiseBf16Amx::create(c.k, c.n, w, bias, c.clamp, c.lo, c.hi,
                                         c.sum, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<uint16_t> expected(dst.size());
  for (int64_t p = 0; p < c.pixels; ++p)
    for (int64_t o = 0; o < c.n; ++o) {
      float s = 0;
      for (int64_t i = 0; i < c.k; ++i)
        s += widen(x[p * c.k + i]) * widen(w[o * c.k + i]);
      if (c.bias)
        s += bias[o];
      if (c.sum)
        s += widen(dst[p * c.n + o]);
      if (c.clamp)
        s = std::min(std::max(s, c.lo), c.hi);
      expected[p * c.n + o] = narrow(s);
    }
  // A guard past the end: the kernel writes n channels per pixel only.
  dst.push_back(0x7FC0);
  kernel->run(x.data(), dst.data(), c.pixels);
  EXPECT_EQ(dst.back(), 0x7FC0);
  int bad = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    const float got = widen(dst[i]), want = widen(expected[i]);
    // Sums of products in another order: within two bf16 steps.
    if (!(std::fabs(got - want) <= 1e-2f * std::fabs(want) + 1e-3f)) {
      ADD_FAILURE() << "pixel " << i / c.n << " channel " << i % c.n << ": "
                    << got << " vs " << want;
      ++bad;
    }
  }
}

TEST(PointwiseAmx, MatchesLoop) {
  if (!pointwiseAmxEnabled())
    GTEST_SKIP() << "no AMX-BF16 here (or GOPT_POINTWISE_AMX=0)";
  const Case cases[] = {
      {16, 96, 100, true, true, false, 1},
      {24, 144, 33, true, true, false, 1},
      {144, 24, 31, true, false, true, 1},
      {96, 24, 1, true, false, false, 1},
      {32, 20, 65, false, true, false, 1},
      {64, 384, 200, true, true, false, 2},
      {384, 64, 1000, true, false, true, 2},
      {32, 16, 64, true, false, false, 1},
      // Last blocks 16 or 8 wide (16, 12, 40, 48 outputs; several k
      // chunks), one block of pixels only, blocks spread over threads,
      // 2-channel k chunks.
      {32, 16, 1000, true, true, false, 1},
      {96, 12, 77, true, false, true, 1},
      {48, 40, 95, true, true, false, 1},
      {320, 48, 49, true, false, true, 1},
      {24, 144, 17, true, true, false, 1},
      {16, 96, 3137, true, true, false, 2},
      {2, 33, 40, false, false, false, 1},
      // Clamps on the rounded bf16 bits (relu, relu6, a bf16 lower
      // bound above 0) and in f32 (a negative lower bound, bounds that
      // are not bf16 values), with and without the residual sum.
      {64, 96, 70, true, true, false, 1, 0, INFINITY},
      {64, 96, 70, true, true, true, 1, 0.5f, 2},
      {64, 96, 70, true, true, true, 1, -1, 1},
      {64, 96, 70, true, true, false, 1, 0.1f, 0.7f},
      {64, 96, 70, true, true, false, 1, -0.0f, 6},
  };
  for (const Case &c : cases)
    check(c);
}

TEST(PointwiseAmx, RejectsOddInputChannels) {
  if (!pointwiseAmxEnabled())
    GTEST_SKIP() << "no AMX-BF16 here";
  std::vector<uint16_t> w(3 * 16, 0);
  EXPECT_FALSE(PointwiseBf16Amx::create(3, 16, w, {}, false, 0, 0, false, 1));
}

} // namespace
