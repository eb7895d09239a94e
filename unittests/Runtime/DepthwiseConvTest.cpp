//===- DepthwiseConvTest.cpp - The bf16 3x3 depthwise kernel vs. a loop ---===//
//
// DepthwiseBf16 against a scalar loop on bf16 inputs (f32 weights and sums,
// one rounding to bf16): strides 1 and 2, channel counts around the
// 32-channel block (5, 33, 72), widths around the 7-output run (1, 2, 8,
// 15), images of one row or column, padding on every edge and on none
// (a band of rows inside an image), bias, relu6 and other clamps (on bf16
// bits and in f32) and none, two threads.
// Skipped where the CPU has no AVX-512 BF16.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/DepthwiseConv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using gopt::runtime::cpu::DepthwiseBf16;
using gopt::runtime::cpu::depthwiseBf16Enabled;
using gopt::runtime::cpu::DepthwiseF32;
using gopt::runtime::cpu::depthwiseF32Enabled;
using gopt::runtime::cpu::DepthwiseGeometry;
using gopt::runtime::cpu::DepthwiseTail;
using gopt::runtime::cpu::siluInPlace;
using gopt::runtime::cpu::siluInPlaceEnabled;
using gopt::runtime::cpu::tailInPlace;

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
  int64_t n, c, h, w, stride, padTop, padLeft, oh, ow;
  bool bias, clamp;
  int threads;
  float lo = 0, hi = 6;
};

// The output size of a 3x3 window with padding `pad` on both sides.
int64_t outSize(int64_t in, int64_t stride, int64_t pad) {
  return (in + 2 * pad - 3) / stride + 1;
}

void check(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "n " << c.n << " c " << c.c << " " << c.h << "x" << c.w
               << " stride " << c.stride << " pad " << c.padTop << ","
               << c.padLeft << " -> " << c.oh << "x" << c.ow << " threads "
               << c.threads);
  std::mt19937 rng(static_cast<unsigned>(c.c * 1000 + c.h * 10 + c.w));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<uint16_t> x(c.n * c.h * c.w * c.c);
  for (auto &v : x)
    v = narrow(3 * u(rng));
  std::vector<float> weights(9 * c.c), bias;
  for (auto &v : weights)
    v = widen(narrow(u(rng)));
  if (c.bias)
    for (int64_t k = 0; k < c.c; ++k)
      bias.push_back(u(rng));
  DepthwiseGeometry g;
  g.n = c.n;
  g.c = c.c;
  g.h = c.h;
  g.w = c.w;
  g.oh = c.oh;
  g.ow = c.ow;
  g.stride = c.stride;
  g.padTop = c.padTop;
  g.padLeft = c.padLeft;
  auto kernel =
      DepthwiseBf16::create(g, weights, bias, c.clamp, c.lo, c.hi, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<uint16_t> expected(c.n * c.oh * c.ow * c.c);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t y = 0; y < c.oh; ++y)
      for (int64_t xo = 0; xo < c.ow; ++xo)
        for (int64_t k = 0; k < c.c; ++k) {
          float s = c.bias ? bias[k] : 0.0f;
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = y * c.stride - c.padTop + kh;
              const int64_t iw = xo * c.stride - c.padLeft + kw;
              if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w)
                continue;
              s += widen(x[((n * c.h + ih) * c.w + iw) * c.c + k]) *
                   weights[(kh * 3 + kw) * c.c + k];
            }
          if (c.clamp)
            s = std::min(std::max(s, c.lo), c.hi);
          expected[((n * c.oh + y) * c.ow + xo) * c.c + k] = narrow(s);
        }
  // A guard past the end: the kernel writes c channels per pixel only.
  std::vector<uint16_t> dst(expected.size() + 1, 0x7FC0);
  kernel->run(x.data(), dst.data());
  EXPECT_EQ(dst.back(), 0x7FC0);
  int bad = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    const float got = widen(dst[i]), want = widen(expected[i]);
    // Sums of products in another order: within two bf16 steps.
    if (!(std::fabs(got - want) <= 1e-2f * std::fabs(want) + 1e-3f)) {
      ADD_FAILURE() << "pixel " << i / c.c << " channel " << i % c.c << ": "
                    << got << " vs " << want;
      ++bad;
    }
  }
}

TEST(DepthwiseConv, MatchesLoop) {
  if (!depthwiseBf16Enabled())
    GTEST_SKIP() << "no AVX-512 BF16 here (or GOPT_DEPTHWISE_KERNEL=0)";
  std::vector<Case> cases;
  for (int64_t stride : {1, 2})
    for (int64_t ch : {5, 33, 72})
      for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 15},
                          {8, 8},
                          {1, 2},
                          {3, 1},
                          {2, 16}}) {
        const int64_t oh = outSize(h, stride, 1), ow = outSize(w, stride, 1);
        cases.push_back(
            {2, ch, h, w, stride, 1, 1, oh, ow, ch != 33, ch != 5, 1});
      }
  // A band of rows inside an image: no padding above or below (the
  // chain's halo rows are real rows), padding left and right.
  cases.push_back({1, 40, 6, 9, 1, 0, 1, 4, 9, true, true, 1});
  cases.push_back({1, 40, 7, 9, 2, 0, 1, 3, 5, true, true, 1});
  // No padding at all (a valid convolution), and two threads.
  cases.push_back({3, 32, 9, 11, 1, 0, 0, 7, 9, true, false, 1});
  cases.push_back({4, 96, 14, 14, 2, 1, 1, 7, 7, true, true, 2});
  // Clamps on the rounded bf16 bits (relu, bounds 0.5 and 2, -0 and 6)
  // and in f32 (a negative lower bound, bounds that are not bf16 values).
  for (auto [lo, hi] : {std::pair<float, float>{0, INFINITY},
                        {0.5f, 2},
                        {-0.0f, 6},
                        {-1, 1},
                        {0.1f, 0.7f}})
    cases.push_back({1, 40, 9, 10, 1, 1, 1, 9, 10, true, true, 1, lo, hi});
  for (const Case &c : cases)
    check(c);
}

TEST(DepthwiseConv, RejectsStride3AndWrongWeights) {
  if (!depthwiseBf16Enabled())
    GTEST_SKIP() << "no AVX-512 BF16 here";
  DepthwiseGeometry g;
  g.n = 1;
  g.c = 8;
  g.h = g.w = 9;
  g.oh = g.ow = 3;
  g.stride = 3;
  EXPECT_FALSE(
      DepthwiseBf16::create(g, std::vector<float>(72), {}, false, 0, 0, 1));
  g.stride = 1;
  g.oh = g.ow = 7;
  EXPECT_FALSE(
      DepthwiseBf16::create(g, std::vector<float>(71), {}, false, 0, 0, 1));
}

// DepthwiseF32 against a scalar loop in double: 3x3 and 5x5, strides 1
// and 2, channel counts around the 16-channel block (5, 16, 33, 72),
// widths around the 7-output run, padding on every edge and none, bias,
// clamps, hardswish and SiLU (also on large inputs, where a naive
// sigmoid overflows), and 1-3 threads with the rows split into channel
// groups (few rows: the 7x7 layers at batch 1).
struct F32Case {
  int64_t n, c, h, w, k, stride, pad;
  bool bias, clamp;
  DepthwiseTail tail;
  int threads;
  float scale = 1; // of the inputs
};

void checkF32(const F32Case &c) {
  const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
  const int64_t ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  SCOPED_TRACE(::testing::Message()
               << "n " << c.n << " c " << c.c << " " << c.h << "x" << c.w
               << " k " << c.k << " stride " << c.stride << " pad " << c.pad
               << " tail " << static_cast<int>(c.tail) << " threads "
               << c.threads);
  std::mt19937 rng(static_cast<unsigned>(c.c * 1000 + c.h * 10 + c.w));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(c.n * c.h * c.w * c.c);
  for (auto &v : x)
    v = c.scale * u(rng);
  std::vector<float> weights(c.k * c.k * c.c), bias;
  for (auto &v : weights)
    v = u(rng);
  if (c.bias)
    for (int64_t k = 0; k < c.c; ++k)
      bias.push_back(u(rng));
  DepthwiseGeometry g;
  g.n = c.n;
  g.c = c.c;
  g.h = c.h;
  g.w = c.w;
  g.oh = oh;
  g.ow = ow;
  g.stride = c.stride;
  g.padTop = g.padLeft = c.pad;
  const float lo = 0, hi = 6;
  auto kernel = DepthwiseF32::create(g, static_cast<int>(c.k), weights, bias,
                                     c.clamp, lo, hi, c.tail, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<float> expected(c.n * oh * ow * c.c);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo)
        for (int64_t k = 0; k < c.c; ++k) {
          double s = c.bias ? bias[k] : 0.0;
          for (int64_t kh = 0; kh < c.k; ++kh)
            for (int64_t kw = 0; kw < c.k; ++kw) {
              const int64_t ih = y * c.stride - c.pad + kh;
              const int64_t iw = xo * c.stride - c.pad + kw;
              if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w)
                continue;
              s += double(x[((n * c.h + ih) * c.w + iw) * c.c + k]) *
                   weights[(kh * c.k + kw) * c.c + k];
            }
          if (c.clamp)
            s = std::min(std::max(s, double(lo)), double(hi));
          if (c.tail == DepthwiseTail::kHardSwish)
            s *= std::min(std::max(s / 6 + 0.5, 0.0), 1.0);
          else if (c.tail == DepthwiseTail::kSwish)
            s /= 1 + std::exp(-s);
          expected[((n * oh + y) * ow + xo) * c.c + k] = static_cast<float>(s);
        }
  // A guard past the end: the kernel writes c channels per pixel only.
  std::vector<float> dst(expected.size() + 1, 12345.0f);
  kernel->run(x.data(), dst.data());
  EXPECT_EQ(dst.back(), 12345.0f);
  int bad = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    const float got = dst[i], want = expected[i];
    if (!(std::fabs(got - want) <= 1e-5f * std::fabs(want) + 1e-5f)) {
      ADD_FAILURE() << "pixel " << i / c.c << " channel " << i % c.c << ": "
                    << got << " vs " << want;
      ++bad;
    }
  }
}

TEST(DepthwiseConv, F32MatchesLoop) {
  if (!depthwiseF32Enabled())
    GTEST_SKIP() << "no AVX-512 here (or GOPT_DEPTHWISE_F32=0)";
  std::vector<F32Case> cases;
  for (int64_t k : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t ch : {5, 16, 33, 72})
        for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 15},
                            {8, 8},
                            {1, 2},
                            {3, 1},
                            {2, 16}})
          cases.push_back({2, ch, h, w, k, stride, k / 2, ch != 33, ch != 5,
                           DepthwiseTail::kNone, 1});
  // No padding (a valid convolution).
  cases.push_back(
      {1, 40, 9, 11, 3, 1, 0, true, false, DepthwiseTail::kNone, 1});
  cases.push_back(
      {1, 40, 9, 11, 5, 2, 0, true, false, DepthwiseTail::kNone, 1});
  // The epilogues; SiLU also far out on both sides (|x| up to ~100).
  for (DepthwiseTail tail : {DepthwiseTail::kHardSwish, DepthwiseTail::kSwish})
    for (int64_t k : {3, 5}) {
      cases.push_back({1, 72, 14, 14, k, 1, k / 2, true, false, tail, 1});
      cases.push_back({1, 40, 9, 10, k, 2, k / 2, true, false, tail, 1, 30});
    }
  // Threads: few rows (7x7 at batch 1, channel groups) and many.
  for (int threads : {2, 3}) {
    cases.push_back(
        {1, 960, 7, 7, 3, 1, 1, true, true, DepthwiseTail::kNone, threads});
    cases.push_back(
        {1, 120, 3, 5, 5, 2, 2, true, false, DepthwiseTail::kSwish, threads});
    cases.push_back({2, 96, 15, 14, 3, 2, 1, true, true,
                     DepthwiseTail::kHardSwish, threads});
    // Enough rows for whole-row ranges: rows run in pairs, a thread's
    // range starting on an odd row (3 threads) and a pair never crossing
    // from one image into the next (odd heights).
    for (int64_t k : {3, 5})
      for (int64_t stride : {1, 2})
        cases.push_back({2, 40, 23, 13, k, stride, k / 2, true, false,
                         DepthwiseTail::kSwish, threads});
  }
  for (const F32Case &c : cases)
    checkF32(c);
}

TEST(DepthwiseConv, F32RejectsOtherKernelsAndWrongWeights) {
  if (!depthwiseF32Enabled())
    GTEST_SKIP() << "no AVX-512 here";
  DepthwiseGeometry g;
  g.n = 1;
  g.c = 8;
  g.h = g.w = 9;
  g.oh = g.ow = 9;
  g.stride = 1;
  g.padTop = g.padLeft = 3;
  EXPECT_FALSE(DepthwiseF32::create(g, 7, std::vector<float>(49 * 8), {}, false,
                                    0, 0, DepthwiseTail::kNone, 1));
  g.padTop = g.padLeft = 1;
  EXPECT_FALSE(DepthwiseF32::create(g, 3, std::vector<float>(71), {}, false, 0,
                                    0, DepthwiseTail::kNone, 1));
  g.stride = 3;
  EXPECT_FALSE(DepthwiseF32::create(g, 3, std::vector<float>(72), {}, false, 0,
                                    0, DepthwiseTail::kNone, 1));
}

// siluInPlace against x / (1 + exp(-x)) in double: lengths around the
// 16-float vector (a masked tail), long enough to split among threads (at
// cuts that are not multiples of 16 before rounding), values far out on
// both sides, zeros and a guard past the end untouched.
TEST(DepthwiseConv, SiluInPlaceMatchesFormula) {
  if (!siluInPlaceEnabled())
    GTEST_SKIP() << "no AVX-512 here (or GOPT_CONV_SILU_PASS=0)";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-100, 100);
  for (int64_t n : {1, 15, 16, 17, 1000, 200003})
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " threads " << threads);
      std::vector<float> x(n + 1);
      for (int64_t i = 0; i < n; ++i)
        x[i] = i % 7 == 0 ? u(rng) : u(rng) / 20;
      x[0] = 0.0f;
      x[n] = 12345.0f;
      const std::vector<float> in = x;
      siluInPlace(x.data(), n, threads);
      EXPECT_EQ(x[n], 12345.0f);
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 5; ++i) {
        const double v = in[i], want = v / (1 + std::exp(-v));
        if (!(std::fabs(x[i] - want) <= 2e-6 * std::fabs(want) + 1e-30)) {
          ADD_FAILURE() << "at " << i << ": silu(" << v << ") = " << x[i]
                        << ", want " << want;
          ++bad;
        }
      }
    }
}

// Far-out values: +inf and 1e30 stay, -100 to -1e30 give (-)0 within
// 1e-30, never NaN (the base-2 SiLU has no lower clamp; the base-e form's
// clamp at -87 gives v / 6e37 there).
TEST(DepthwiseConv, SiluInPlaceFarOut) {
  if (!siluInPlaceEnabled() || !gopt::runtime::cpu::siluExp2Enabled() ||
      !gopt::runtime::cpu::siluDirectEnabled())
    GTEST_SKIP() << "no AVX-512 here, or not the base-2 SiLU";
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {inf,  1e30f, 100.0f, 88.5f, -88.5f, -89.0f,
                          -100, -3e6f, -5e6f,  -1e9f, -1e30f};
  const std::vector<float> in = x;
  siluInPlace(x.data(), static_cast<int64_t>(x.size()), 1);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = in[i], want = v / (1 + std::exp(-v));
    EXPECT_TRUE(x[i] == want ||
                std::fabs(x[i] - want) <= 2e-6 * std::fabs(want) + 1e-30)
        << "silu(" << v << ") = " << x[i] << ", want " << want;
  }
}

// tailInPlace's HardSwish against x * clamp(x / 6 + 0.5, 0, 1) in double,
// on both sides of the clamp's corners (-3, 3) and split among threads.
TEST(DepthwiseConv, HardSwishInPlaceMatchesFormula) {
  if (!siluInPlaceEnabled())
    GTEST_SKIP() << "no AVX-512 here (or GOPT_CONV_SILU_PASS=0)";
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-8, 8);
  for (int64_t n : {5, 33, 200003})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " threads " << threads);
      std::vector<float> x(n + 1);
      for (int64_t i = 0; i < n; ++i)
        x[i] = u(rng);
      x[n] = 12345.0f;
      const std::vector<float> in = x;
      tailInPlace(x.data(), n, DepthwiseTail::kHardSwish, threads);
      EXPECT_EQ(x[n], 12345.0f);
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 5; ++i) {
        const double v = in[i];
        const double want = v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0);
        if (!(std::fabs(x[i] - want) <= 1e-6 * std::fabs(want) + 1e-7)) {
          ADD_FAILURE() << "at " << i << ": hardswish(" << v << ") = " << x[i]
                        << ", want " << want;
          ++bad;
        }
      }
    }
}

} // namespace
