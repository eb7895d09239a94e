//===- DepthwiseInt8Test.cpp - The int8 3x3 depthwise kernel vs. a loop ---===//
//
// DepthwiseInt8 against a scalar loop of the same formula (exact int32
// sums over the zero-padded window, then the f32 epilogue in the same
// order): u8 and s8 sources and results, stride 1 and 2, odd sizes, padding
// on every edge (and none, as a chain's row bands give), channel counts
// that are no multiple of 16 or 64 (1, 15, 40, 72, 144, 200), per-channel
// scales, bias, relu6, the requantized form, several images and two
// threads, with stride 1's row pairs and without. The results must match
// exactly. Skipped without AVX512-VNNI.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/DepthwiseInt8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using gopt::runtime::cpu::DepthwiseGeometry;
using gopt::runtime::cpu::DepthwiseInt8;
using gopt::runtime::cpu::depthwiseInt8Enabled;
using gopt::runtime::cpu::DepthwiseInt8Params;

namespace {

struct Case {
  int64_t n, c, h, w, stride, padTop, padLeft, padBottom, padRight;
  bool srcUnsigned, dstUnsigned, bias, relu6, requantize;
  int threads;
  float scaleBoost = 1; // large: values past int32 before the clamp
};

void check(const Case &c) {
  DepthwiseGeometry g;
  g.n = c.n;
  g.c = c.c;
  g.h = c.h;
  g.w = c.w;
  g.stride = c.stride;
  g.padTop = c.padTop;
  g.padLeft = c.padLeft;
  g.oh = (c.h + c.padTop + c.padBottom - 3) / c.stride + 1;
  g.ow = (c.w + c.padLeft + c.padRight - 3) / c.stride + 1;
  SCOPED_TRACE(::testing::Message()
               << "n " << c.n << " c " << c.c << " " << c.h << "x" << c.w
               << " stride " << c.stride << " pads " << c.padTop << ","
               << c.padLeft << "," << c.padBottom << "," << c.padRight
               << " u8 src " << c.srcUnsigned << " u8 dst " << c.dstUnsigned
               << " requantize " << c.requantize << " threads " << c.threads);
  std::mt19937 rng(static_cast<unsigned>(c.c * 1000 + c.h * 10 + c.stride));
  std::uniform_int_distribution<int> s8(-128, 127), u7(0, 127), u8(0, 255);
  std::uniform_real_distribution<float> u(0.5f, 1.5f), b(-40, 40);
  std::vector<int8_t> w(9 * c.c);
  for (auto &v : w)
    v = static_cast<int8_t>(s8(rng));
  std::vector<uint8_t> x(c.n * c.h * c.w * c.c);
  // u8 sources use the whole byte range: the kernel must not assume the
  // plans' [0, 127].
  for (auto &v : x)
    v = static_cast<uint8_t>(c.srcUnsigned ? u8(rng) : s8(rng));
  DepthwiseInt8Params p;
  p.srcUnsigned = c.srcUnsigned;
  // Sums reach about 128 * 128 * 3: scale them back to about +-100.
  const float base = 100.0f / (128 * 128 * 3);
  for (int64_t o = 0; o < c.c; ++o) {
    p.scale.push_back(base * u(rng) * c.scaleBoost);
    if (c.bias)
      p.biasScaled.push_back(b(rng) / base);
  }
  p.requantize = c.requantize;
  p.requantScale = 0.75f;
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
  auto kernel = DepthwiseInt8::create(g, w, p, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<int> expected(g.n * g.oh * g.ow * g.c);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t xo = 0; xo < g.ow; ++xo)
        for (int64_t ch = 0; ch < g.c; ++ch) {
          int32_t acc = 0;
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = y * g.stride - g.padTop + kh;
              const int64_t iw = xo * g.stride - g.padLeft + kw;
              if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
                continue;
              const uint8_t a = x[((n * g.h + ih) * g.w + iw) * g.c + ch];
              acc += (c.srcUnsigned ? int32_t(a) : int32_t(int8_t(a))) *
                     int32_t(w[(kh * 3 + kw) * g.c + ch]);
            }
          float v =
              (float(acc) + (c.bias ? p.biasScaled[ch] : 0.0f)) * p.scale[ch];
          if (c.requantize)
            v = std::min(std::max(std::nearbyint(v), -128.0f), 127.0f) *
                p.requantScale;
          v = std::min(std::max(v, p.lo), p.hi);
          v = std::min(
              std::max(std::nearbyint(v), c.dstUnsigned ? 0.0f : -128.0f),
              c.dstUnsigned ? 255.0f : 127.0f);
          expected[((n * g.oh + y) * g.ow + xo) * g.c + ch] =
              static_cast<int>(v);
        }
  // A guard past the end: the kernel writes c channels per pixel only.
  std::vector<uint8_t> dst(expected.size() + 1, 0x5A);
  kernel->run(x.data(), dst.data());
  EXPECT_EQ(dst.back(), 0x5A);
  int bad = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    const int got = c.dstUnsigned ? int(dst[i]) : int(int8_t(dst[i]));
    if (got != expected[i]) {
      ADD_FAILURE() << "pixel " << i / g.c << " channel " << i % g.c << ": "
                    << got << " vs " << expected[i];
      ++bad;
    }
  }
}

void checkAll() {
  const Case cases[] = {
      // n, c, h, w, stride, pads (top, left, bottom, right), u8 src, u8 dst,
      // bias, relu6, requantize, threads
      {1, 32, 13, 11, 1, 1, 1, 1, 1, true, true, true, true, false, 1},
      {2, 72, 9, 7, 1, 1, 1, 1, 1, true, true, true, true, false, 1},
      {1, 144, 11, 13, 2, 1, 1, 1, 1, true, true, true, true, false, 1},
      {1, 96, 12, 12, 2, 0, 0, 1, 1, true, true, true, true, false, 1},
      {1, 15, 5, 9, 1, 1, 1, 1, 1, false, false, true, false, false, 1},
      {1, 40, 6, 5, 2, 1, 1, 1, 1, false, true, false, true, false, 1},
      {1, 200, 7, 7, 1, 1, 1, 1, 1, true, false, true, false, true, 1},
      {1, 1, 3, 3, 1, 0, 0, 0, 0, true, true, true, true, false, 1},
      {1, 1, 4, 4, 2, 1, 1, 0, 0, false, false, false, false, true, 1},
      // Row bands: no padding at the top or bottom, or only at one.
      {1, 72, 6, 9, 1, 0, 1, 0, 1, true, true, true, true, false, 1},
      {1, 72, 6, 9, 1, 1, 1, 0, 1, true, true, true, true, false, 1},
      {1, 96, 7, 10, 2, 0, 1, 1, 1, true, true, true, true, false, 1},
      {3, 144, 14, 14, 1, 1, 1, 1, 1, true, true, true, true, true, 2},
      {2, 960, 7, 7, 1, 1, 1, 1, 1, true, true, true, true, false, 2},
      {2, 576, 14, 14, 2, 1, 1, 1, 1, false, false, true, false, false, 2},
      // 16 and 32 channels at stride 1: several pixels a vector, odd
      // widths (a last vector of fewer pixels), padding on either side.
      {2, 32, 9, 11, 1, 1, 1, 1, 1, true, true, true, true, false, 1},
      {1, 32, 6, 8, 1, 0, 1, 1, 1, false, false, true, false, false, 1},
      {1, 16, 7, 13, 1, 1, 1, 1, 1, true, true, true, true, false, 1},
      {1, 16, 5, 6, 1, 1, 0, 1, 0, false, true, false, true, false, 2},
      {1, 16, 5, 7, 1, 1, 1, 1, 1, true, false, true, false, true, 1},
      {1, 32, 9, 9, 2, 1, 1, 1, 1, true, true, true, true, false, 1},
      // Sums scaled past int32 before the clamp: the f32 clamp.
      {1, 72, 5, 5, 1, 1, 1, 1, 1, true, true, true, true, false, 1, 1e9f},
      {1, 40, 5, 5, 1, 1, 1, 1, 1, false, false, true, false, false, 1, 1e9f},
  };
  for (const Case &c : cases)
    check(c);
}

// Stride 1 runs two output rows a pass by default (row pairs; odd heights
// leave a last row alone); both ways must match the loop exactly.
TEST(DepthwiseInt8, MatchesLoop) {
  if (!depthwiseInt8Enabled())
    GTEST_SKIP() << "no AVX512-VNNI here (or GOPT_DEPTHWISE_INT8=0)";
  checkAll();
}

TEST(DepthwiseInt8, MatchesLoopWithoutRowPairs) {
  if (!depthwiseInt8Enabled())
    GTEST_SKIP() << "no AVX512-VNNI here (or GOPT_DEPTHWISE_INT8=0)";
  setenv("GOPT_DEPTHWISE_INT8_ROW_PAIRS", "0", 1);
  checkAll();
  unsetenv("GOPT_DEPTHWISE_INT8_ROW_PAIRS");
}

TEST(DepthwiseInt8, RejectsOtherShapes) {
  if (!depthwiseInt8Enabled())
    GTEST_SKIP() << "no AVX512-VNNI here";
  DepthwiseGeometry g;
  g.n = 1, g.c = 16, g.h = g.w = 8, g.oh = g.ow = 3, g.stride = 3;
  std::vector<int8_t> w(9 * 16, 1);
  DepthwiseInt8Params p;
  p.scale.assign(16, 1.0f);
  EXPECT_FALSE(DepthwiseInt8::create(g, w, p, 1)); // stride 3
  g.stride = 1, g.oh = g.ow = 8, g.padTop = g.padLeft = 1;
  EXPECT_TRUE(DepthwiseInt8::create(g, w, p, 1));
  w.pop_back();
  EXPECT_FALSE(DepthwiseInt8::create(g, w, p, 1)); // 9 * c weights
}

} // namespace
