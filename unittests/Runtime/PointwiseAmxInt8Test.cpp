//===- PointwiseAmxInt8Test.cpp - The AMX int8 1x1 convolution vs. a loop -===//
//
// PointwiseInt8Amx against a scalar loop of the same formula (exact int32
// sums, then the f32 epilogue): u8 and s8 sources, MobileNet's channel
// counts (16 -> 96, 24 -> 144, 144 -> 24, 96 -> 24, 160 -> 960: chunks of
// 16, 24, 48 and 40), an output tail (20 of 32), pixel counts around the
// 32-pixel block, per-channel scales, bias, relu6, u8 results, the
// requantized residual sum (s8 and u8 accumulators), and two threads.
// Results may differ by one where the f32 products round differently
// across a .5; no more. Skipped where the CPU has no AMX.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/PointwiseAmx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using gopt::runtime::cpu::pointwiseAmxInt8Enabled;
using gopt::runtime::cpu::PointwiseInt8Amx;
using gopt::runtime::cpu::PointwiseInt8Params;

namespace {

struct Case {
  int64_t k, n, pixels;
  bool srcUnsigned, dstUnsigned, bias, relu6, sum, sumSigned, requantize;
  int threads;
};

void check(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "k " << c.k << " n " << c.n << " pixels " << c.pixels
               << " u8 src " << c.srcUnsigned << " u8 dst " << c.dstUnsigned
               << " sum " << c.sum << " threads " << c.threads);
  std::mt19937 rng(static_cast<unsigned>(c.k * 1000 + c.n + c.pixels));
  std::uniform_int_distribution<int> s8(-128, 127), u7(0, 127);
  std::uniform_real_distribution<float> u(0.5f, 1.5f), b(-50, 50);
  std::vector<int8_t> w(c.k * c.n);
  for (auto &v : w)
    v = static_cast<int8_t>(s8(rng));
  std::vector<uint8_t> x(c.pixels * c.k), dst(c.pixels * c.n);
  for (auto &v : x)
    v = static_cast<uint8_t>(c.srcUnsigned ? u7(rng) : s8(rng));
  const bool oldSigned = c.sumSigned || !c.dstUnsigned;
  for (auto &v : dst)
    v = static_cast<uint8_t>(oldSigned ? s8(rng) : u7(rng));
  PointwiseInt8Params p;
  p.srcUnsigned = c.srcUnsigned;
  // Sums reach about 127 * 127 * sqrt(k): scale them back to about +-100.
  const float base = 100.0f / (127 * 127 * std::sqrt(float(c.k)));
  for (int64_t o = 0; o < c.n; ++o) {
    p.scale.push_back(base * u(rng));
    if (c.bias)
      p.biasScaled.push_back(b(rng) / base);
  }
  p.requantize = c.requantize;
  p.requantScale = 0.75f;
  p.sum = c.sum;
  p.sumSigned = c.sumSigned;
  p.sumScale = 0.5f;
  p.dstUnsigned = c.dstUnsigned;
  if (c.relu6) {
    p.lo = 0;
    p.hi = 60;
  } else {
    p.lo = -1e30f;
    p.hi = 1e30f;
  }
  if (c.dstUnsigned)
    p.lo = std::max(p.lo, 0.0f), p.hi = std::min(p.hi, 127.0f);
  auto kernel = PointwiseInt8Amx::create(c.k, c.n, w, p, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<int> expected(dst.size());
  for (int64_t px = 0; px < c.pixels; ++px)
    for (int64_t o = 0; o < c.n; ++o) {
      int32_t acc = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        const uint8_t a = x[px * c.k + i];
        acc += (c.srcUnsigned ? int32_t(a) : int32_t(int8_t(a))) *
               int32_t(w[o * c.k + i]);
      }
      float v = (float(acc) + (c.bias ? p.biasScaled[o] : 0.0f)) * p.scale[o];
      if (c.requantize)
        v = std::min(std::max(std::nearbyint(v), -128.0f), 127.0f) *
            p.requantScale;
      if (c.sum) {
        const uint8_t old = dst[px * c.n + o];
        v += p.sumScale * (oldSigned ? float(int8_t(old)) : float(old));
      }
      v = std::min(std::max(v, p.lo), p.hi);
      v = std::min(std::max(std::nearbyint(v), c.dstUnsigned ? 0.0f : -128.0f),
                   c.dstUnsigned ? 255.0f : 127.0f);
      expected[px * c.n + o] = static_cast<int>(v);
    }
  // A guard past the end: the kernel writes n channels per pixel only.
  dst.push_back(0x5A);
  kernel->run(x.data(), dst.data(), c.pixels);
  EXPECT_EQ(dst.back(), 0x5A);
  int bad = 0, offByOne = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    const int got = c.dstUnsigned ? int(dst[i]) : int(int8_t(dst[i]));
    if (got != expected[i] && std::abs(got - expected[i]) == 1)
      ++offByOne;
    else if (got != expected[i]) {
      ADD_FAILURE() << "pixel " << i / c.n << " channel " << i % c.n << ": "
                    << got << " vs " << expected[i];
      ++bad;
    }
  }
  // Off by one only at rare .5 ties of differently rounded f32 products.
  EXPECT_LE(offByOne, static_cast<int>(expected.size() / 100 + 1));
}

TEST(PointwiseAmxInt8, MatchesLoop) {
  if (!pointwiseAmxInt8Enabled())
    GTEST_SKIP() << "no AMX-INT8 here (or GOPT_POINTWISE_AMX_INT8=0)";
  const Case cases[] = {
      // k, n, pixels, u8 src, u8 dst, bias, relu6, sum, sumSigned, requant
      {16, 96, 100, true, true, true, true, false, false, false, 1},
      {24, 144, 33, false, true, true, true, false, false, false, 1},
      {144, 24, 31, true, false, true, false, true, false, true, 1},
      {96, 24, 1, true, false, true, false, false, false, false, 1},
      {32, 20, 65, false, false, false, true, false, false, false, 1},
      {160, 960, 49, true, true, true, true, false, false, false, 1},
      {64, 384, 200, true, true, true, true, false, false, false, 2},
      {384, 64, 1000, true, true, true, false, true, true, true, 2},
      {32, 16, 64, false, false, true, false, true, false, false, 1},
      // Residual rows of fewer than 32 bytes (loaded 8 rows at a time):
      // several blocks, a short last group, u8 output over s8 residual.
      {144, 24, 100, true, true, true, true, true, true, false, 1},
      {64, 8, 45, false, false, true, false, true, false, false, 2},
  };
  for (const Case &c : cases)
    check(c);
}

TEST(PointwiseAmxInt8, RejectsUnevenInputChannels) {
  if (!pointwiseAmxInt8Enabled())
    GTEST_SKIP() << "no AMX-INT8 here";
  std::vector<int8_t> w(6 * 16, 0);
  PointwiseInt8Params p;
  p.scale.assign(16, 1.0f);
  EXPECT_FALSE(PointwiseInt8Amx::create(6, 16, w, p, 1));
}

} // namespace

// The packed epilogue (clamp on the rounded bytes, two rows a VPACK*) gives
// the same bytes as the f32 clamp and VPMOVUSDB/VPMOVSDB
// (GOPT_POINTWISE_AMX_INT8_PACKED=0), pipelined or not, with the A tiles
// kept across output blocks and half blocks or not, over clamp bounds
// that are not whole numbers, bounds outside the byte range, output tails,
// odd pixel counts and several 32-pixel blocks and 32-output blocks.
TEST(PointwiseAmxInt8, PackedEpilogueSameBits) {
  if (!pointwiseAmxInt8Enabled())
    GTEST_SKIP() << "no AMX-INT8 here (or GOPT_POINTWISE_AMX_INT8=0)";
  struct Bits {
    int64_t k, n, pixels;
    bool srcUnsigned, dstUnsigned, sum, sumSigned, requantize;
    float lo, hi;
  };
  const Bits cases[] = {
      {16, 96, 101, false, true, false, false, false, 0.3f, 60.5f},
      {24, 144, 33, true, true, false, false, false, 0.0f, 127.0f},
      {144, 24, 63, true, false, true, false, true, -128.0f, 127.0f},
      {96, 24, 1, true, false, false, false, false, -20.5f, 90.5f},
      {32, 20, 65, false, false, false, false, false, -300.0f, 300.0f},
      {160, 960, 49, true, true, false, false, false, 2.5f, 6.5f},
      {64, 8, 45, false, false, true, false, false, -1.5f, 1.5f},
      {144, 24, 100, true, true, true, true, false, 0.0f, 127.0f},
      {384, 64, 77, true, false, true, true, true, -60.5f, -100.0f},
      // At most 16 outputs in a block (two C tiles, four rows a vector).
      {32, 16, 77, false, false, false, false, false, -128.0f, 127.0f},
      {16, 48, 70, true, true, false, false, false, 0.0f, 100.5f},
      {64, 12, 45, false, false, true, false, true, -3.5f, 90.0f},
  };
  for (const Bits &c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "k " << c.k << " n " << c.n << " pixels " << c.pixels);
    std::mt19937 rng(static_cast<unsigned>(c.k * 7 + c.n + c.pixels));
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> u(0.5f, 1.5f), b(-50, 50);
    std::vector<int8_t> w(c.k * c.n);
    for (auto &v : w)
      v = static_cast<int8_t>(byte(rng));
    std::vector<uint8_t> x(c.pixels * c.k), old(c.pixels * c.n);
    for (auto &v : x)
      v = static_cast<uint8_t>(byte(rng));
    for (auto &v : old)
      v = static_cast<uint8_t>(byte(rng));
    PointwiseInt8Params p;
    p.srcUnsigned = c.srcUnsigned;
    // Wide enough that many results saturate either way.
    const float base = 300.0f / (127 * 127 * std::sqrt(float(c.k)));
    for (int64_t o = 0; o < c.n; ++o) {
      p.scale.push_back(base * u(rng));
      p.biasScaled.push_back(b(rng) / base);
    }
    p.requantize = c.requantize;
    p.requantScale = 0.8f;
    p.sum = c.sum;
    p.sumSigned = c.sumSigned;
    p.sumScale = 0.6f;
    p.dstUnsigned = c.dstUnsigned;
    p.lo = c.lo;
    p.hi = c.hi;
    // 0: the f32 clamp; 1: packed, one block at a time; 2: packed and
    // pipelined; 3: that without kept A tiles and half blocks.
    constexpr int kModes = 4;
    std::vector<uint8_t> got[kModes];
    for (int mode = 0; mode < kModes; ++mode) {
      setenv("GOPT_POINTWISE_AMX_INT8_PACKED", mode ? "1" : "0", 1);
      setenv("GOPT_POINTWISE_AMX_INT8_PIPELINE", mode >= 2 ? "1" : "0", 1);
      setenv("GOPT_POINTWISE_AMX_INT8_KEEP_A", mode == 3 ? "0" : "1", 1);
      setenv("GOPT_POINTWISE_AMX_INT8_NARROW", mode == 3 ? "0" : "1", 1);
      auto kernel = PointwiseInt8Amx::create(c.k, c.n, w, p, 1);
      ASSERT_TRUE(kernel);
      got[mode] = old;
      got[mode].push_back(0x5A); // a guard past the end
      kernel->run(x.data(), got[mode].data(), c.pixels);
      EXPECT_EQ(got[mode].back(), 0x5A);
    }
    unsetenv("GOPT_POINTWISE_AMX_INT8_PACKED");
    unsetenv("GOPT_POINTWISE_AMX_INT8_PIPELINE");
    unsetenv("GOPT_POINTWISE_AMX_INT8_KEEP_A");
    unsetenv("GOPT_POINTWISE_AMX_INT8_NARROW");
    for (int mode = 1; mode < kModes; ++mode) {
      int bad = 0;
      for (size_t i = 0; i < old.size() && bad < 5; ++i)
        if (got[0][i] != got[mode][i]) {
          ADD_FAILURE() << "mode " << mode << " pixel " << i / c.n
                        << " channel " << i % c.n << ": " << int(got[mode][i])
                        << " vs " << int(got[0][i]);
          ++bad;
        }
    }
  }
}
