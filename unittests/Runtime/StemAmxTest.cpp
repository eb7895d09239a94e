//===- StemAmxTest.cpp - The AMX 3x3 stem convolution vs. loops -----------===//
//
// StemConvAmx against (1) the 1x1 AMX kernel it feeds, run on rows
// gathered by a scalar im2col loop: the same bits (a wrong gather, mask or
// padding shows here exactly); (2) a scalar convolution loop: int8 within
// one at rare f32 rounding ties, bf16 within one bf16 step (the f32 sums'
// order). Geometries: MobileNetV2's stem (3 -> 32, 224x224, stride 2, pad
// 1), odd sizes, 1 and 2 channels, stride 1, no padding, a bottom/right
// edge past the image, u8 and s8 sources, two threads. Skipped without AMX.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/StemAmx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using gopt::runtime::cpu::PointwiseBf16Amx;
using gopt::runtime::cpu::PointwiseInt8Amx;
using gopt::runtime::cpu::PointwiseInt8Params;
using gopt::runtime::cpu::stemAmxEnabled;
using gopt::runtime::cpu::StemConvAmx;
using gopt::runtime::cpu::StemGeometry;

namespace {

struct Case {
  int64_t c, h, w, stride, pad, n, images;
  bool srcUnsigned;
  int threads;
};

StemGeometry geometry(const Case &c) {
  StemGeometry g;
  g.channels = c.c;
  g.height = c.h;
  g.width = c.w;
  g.stride = c.stride;
  g.padTop = g.padLeft = c.pad;
  g.outHeight = (c.h + 2 * c.pad - 3) / c.stride + 1;
  g.outWidth = (c.w + 2 * c.pad - 3) / c.stride + 1;
  return g;
}

// Rows [pixels][32] of each output pixel's window (kh, kw, channel), zero
// outside the image and past 9c.
template <typename T>
std::vector<T> im2col(const StemGeometry &g, const std::vector<T> &x,
                      int64_t images) {
  const int64_t pixels = g.outHeight * g.outWidth;
  std::vector<T> rows(images * pixels * StemConvAmx::kRow, T(0));
  for (int64_t img = 0; img < images; ++img)
    for (int64_t oh = 0; oh < g.outHeight; ++oh)
      for (int64_t ow = 0; ow < g.outWidth; ++ow)
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw)
            for (int64_t ci = 0; ci < g.channels; ++ci) {
              const int64_t ih = oh * g.stride - g.padTop + kh;
              const int64_t iw = ow * g.stride - g.padLeft + kw;
              if (ih < 0 || ih >= g.height || iw < 0 || iw >= g.width)
                continue;
              rows[((img * pixels) + oh * g.outWidth + ow) * StemConvAmx::kRow +
                   (kh * 3 + kw) * g.channels + ci] =
                  x[((img * g.height + ih) * g.width + iw) * g.channels + ci];
            }
  return rows;
}

template <typename T>
std::vector<T> padWeights(const std::vector<T> &w, int64_t n, int64_t c) {
  std::vector<T> out(n * StemConvAmx::kRow, T(0));
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < 9 * c; ++i)
      out[o * StemConvAmx::kRow + i] = w[o * 9 * c + i];
  return out;
}

void checkInt8(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "int8 c " << c.c << " " << c.h << "x" << c.w << " stride "
               << c.stride << " pad " << c.pad << " n " << c.n << " threads "
               << c.threads);
  const StemGeometry g = geometry(c);
  std::mt19937 rng(static_cast<unsigned>(c.h * 100 + c.w + c.c));
  std::uniform_int_distribution<int> s8(-128, 127), u7(0, 127);
  std::uniform_real_distribution<float> u(0.5f, 1.5f), b(-50, 50);
  std::vector<int8_t> w(c.n * 9 * c.c);
  for (auto &v : w)
    v = static_cast<int8_t>(s8(rng));
  std::vector<uint8_t> x(c.images * c.h * c.w * c.c);
  for (auto &v : x)
    v = static_cast<uint8_t>(c.srcUnsigned ? u7(rng) : s8(rng));
  PointwiseInt8Params p;
  p.srcUnsigned = c.srcUnsigned;
  const float base = 100.0f / (127 * 127 * std::sqrt(float(9 * c.c)));
  for (int64_t o = 0; o < c.n; ++o) {
    p.scale.push_back(base * u(rng));
    p.biasScaled.push_back(b(rng) / base);
  }
  p.dstUnsigned = true; // MobileNet's relu6 stem: u8 in [0, 60]
  p.lo = 0;
  p.hi = 60;
  auto stem = StemConvAmx::createInt8(g, c.n, w, p, c.threads);
  ASSERT_TRUE(stem);
  const int64_t pixels = c.images * g.outHeight * g.outWidth;
  std::vector<uint8_t> dst(pixels * c.n + 1, 0x5A);
  stem->run(x.data(), dst.data(), c.images);
  EXPECT_EQ(dst.back(), 0x5A); // nothing past the results

  // (1) The same bits as the 1x1 kernel on the loop's rows.
  auto pw = PointwiseInt8Amx::create(StemConvAmx::kRow, c.n,
                                     padWeights(w, c.n, c.c), p, 1);
  ASSERT_TRUE(pw);
  const std::vector<uint8_t> rows = im2col(g, x, c.images);
  std::vector<uint8_t> same(pixels * c.n);
  pw->run(rows.data(), same.data(), pixels);
  int bad = 0;
  for (int64_t i = 0; i < pixels * c.n && bad < 5; ++i)
    if (dst[i] != same[i]) {
      ADD_FAILURE() << "pixel " << i / c.n << " channel " << i % c.n << ": "
                    << int(dst[i]) << " vs the 1x1 kernel's " << int(same[i]);
      ++bad;
    }
  // (2) A scalar convolution and the formula.
  int offByOne = 0;
  for (int64_t px = 0; px < pixels && bad < 5; ++px)
    for (int64_t o = 0; o < c.n; ++o) {
      int32_t acc = 0;
      for (int64_t i = 0; i < 9 * c.c; ++i) {
        const uint8_t a = rows[px * StemConvAmx::kRow + i];
        acc += (c.srcUnsigned ? int32_t(a) : int32_t(int8_t(a))) *
               int32_t(w[o * 9 * c.c + i]);
      }
      float v = (float(acc) + p.biasScaled[o]) * p.scale[o];
      v = std::min(
          std::max(std::nearbyint(std::min(std::max(v, p.lo), p.hi)), 0.0f),
          255.0f);
      const int got = dst[px * c.n + o];
      if (got != int(v) && std::abs(got - int(v)) == 1) {
        ++offByOne;
      } else if (got != int(v)) {
        ADD_FAILURE() << "pixel " << px << " channel " << o << ": " << got
                      << " vs the loop's " << v;
        ++bad;
      }
    }
  EXPECT_LE(offByOne, static_cast<int>(pixels * c.n / 100 + 1));
}

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void checkBf16(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "bf16 c " << c.c << " " << c.h << "x" << c.w << " stride "
               << c.stride << " pad " << c.pad << " n " << c.n << " threads "
               << c.threads);
  const StemGeometry g = geometry(c);
  std::mt19937 rng(static_cast<unsigned>(c.h * 10 + c.w + c.c));
  std::uniform_real_distribution<float> x1(-2, 2), w1(-0.5f, 0.5f);
  std::vector<uint16_t> w(c.n * 9 * c.c), x(c.images * c.h * c.w * c.c);
  for (auto &v : w)
    v = toBf16(w1(rng));
  for (auto &v : x)
    v = toBf16(x1(rng));
  std::vector<float> bias(c.n);
  for (auto &v : bias)
    v = w1(rng);
  const float lo = 0, hi = 6;
  auto stem = StemConvAmx::createBf16(g, c.n, w, bias, true, lo, hi, c.threads);
  ASSERT_TRUE(stem);
  const int64_t pixels = c.images * g.outHeight * g.outWidth;
  std::vector<uint16_t> dst(pixels * c.n + 1, 0x5A5A);
  stem->run(x.data(), dst.data(), c.images);
  EXPECT_EQ(dst.back(), 0x5A5A);
  auto pw =
      PointwiseBf16Amx::create(StemConvAmx::kRow, c.n, padWeights(w, c.n, c.c),
                               bias, true, lo, hi, false, 1);
  ASSERT_TRUE(pw);
  const std::vector<uint16_t> rows = im2col(g, x, c.images);
  std::vector<uint16_t> same(pixels * c.n);
  pw->run(rows.data(), same.data(), pixels);
  int bad = 0;
  for (int64_t i = 0; i < pixels * c.n && bad < 5; ++i)
    if (dst[i] != same[i]) {
      ADD_FAILURE() << "pixel " << i / c.n << " channel " << i % c.n << ": "
                    << fromBf16(dst[i]) << " vs the 1x1 kernel's "
                    << fromBf16(same[i]);
      ++bad;
    }
  for (int64_t px = 0; px < pixels && bad < 5; ++px)
    for (int64_t o = 0; o < c.n; ++o) {
      double acc = bias[o];
      for (int64_t i = 0; i < 9 * c.c; ++i)
        acc += double(fromBf16(rows[px * StemConvAmx::kRow + i])) *
               fromBf16(w[o * 9 * c.c + i]);
      const float want = std::min(std::max(float(acc), lo), hi);
      const float got = fromBf16(dst[px * c.n + o]);
      // One bf16 step of the result (8 bits of mantissa), plus the f32
      // sums' own rounding near zero.
      if (std::fabs(got - want) > std::fabs(want) / 128 + 1e-5f) {
        ADD_FAILURE() << "pixel " << px << " channel " << o << ": " << got
                      << " vs the loop's " << want;
        ++bad;
      }
    }
}

const Case kCases[] = {
    // c, h, w, stride, pad, n, images, u8 src, threads
    {3, 224, 224, 2, 1, 32, 2, false, 1}, // MobileNetV2's stem
    {3, 17, 19, 2, 1, 32, 3, false, 1},   // odd sizes: the last column
    {3, 16, 15, 2, 0, 16, 1, true, 1},    // no padding, 16 outputs
    {1, 9, 13, 1, 1, 48, 2, false, 1},    // one channel, stride 1
    {2, 10, 7, 2, 1, 24, 2, true, 1},     // two channels, 24 outputs
    {3, 31, 33, 2, 1, 32, 3, false, 2},   // two threads
    {3, 5, 300, 2, 1, 32, 1, false, 1},   // one row a band
};

// Both gathers: interior pixels by permutes (the default) and every pixel
// by masked loads (GOPT_STEM_AMX_PERMUTE=0, read at creation).
TEST(StemAmx, Int8MatchesLoops) {
  if (!stemAmxEnabled())
    GTEST_SKIP() << "no AMX here (or GOPT_STEM_AMX=0)";
  for (const char *permute : {"1", "0"}) {
    SCOPED_TRACE(::testing::Message() << "permute " << permute);
    setenv("GOPT_STEM_AMX_PERMUTE", permute, 1);
    for (const Case &c : kCases)
      checkInt8(c);
  }
  unsetenv("GOPT_STEM_AMX_PERMUTE");
}

TEST(StemAmx, Bf16MatchesLoops) {
  if (!stemAmxEnabled())
    GTEST_SKIP() << "no AMX here (or GOPT_STEM_AMX=0)";
  for (const char *permute : {"1", "0"}) {
    SCOPED_TRACE(::testing::Message() << "permute " << permute);
    setenv("GOPT_STEM_AMX_PERMUTE", permute, 1);
    for (const Case &c : kCases)
      checkBf16(c);
  }
  unsetenv("GOPT_STEM_AMX_PERMUTE");
}

// readF32Source: the stem reading plain NCHW f32 images and converting
// each band's rows gives the bits of the stem on the whole images
// converted first (rgbToInt8Pixels / rgbToBf16Pixels), for the int8 and
// bf16 kernels, bands cut at odd rows, padding and none, two threads.
TEST(StemAmx, F32SourceSameBits) {
  if (!stemAmxEnabled())
    GTEST_SKIP() << "no AMX here (or GOPT_STEM_AMX=0)";
  const Case cases[] = {{3, 224, 224, 2, 1, 32, 2, false, 1},
                        {3, 37, 29, 2, 1, 32, 3, false, 2},
                        {3, 20, 300, 2, 0, 16, 1, false, 1},
                        {3, 11, 13, 1, 1, 24, 2, false, 1}};
  for (const Case &c : cases) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << " stride "
                                      << c.stride << " pad " << c.pad);
    const StemGeometry g = geometry(c);
    const int64_t plane = c.h * c.w, image = 3 * plane;
    std::mt19937 rng(static_cast<unsigned>(c.h + c.w));
    std::uniform_real_distribution<float> u(-3, 3);
    std::vector<float> x(c.images * image);
    for (auto &v : x)
      v = u(rng);
    const float scale = 1 / 0.025f;
    std::vector<int8_t> q(x.size());
    std::vector<uint16_t> h(x.size());
    for (int64_t n = 0; n < c.images; ++n) {
      gopt::runtime::cpu::rgbToInt8Pixels(x.data() + n * image, plane,
                                          q.data() + n * image, plane, scale);
      gopt::runtime::cpu::rgbToBf16Pixels(x.data() + n * image, plane,
                                          h.data() + n * image, plane);
    }
    std::vector<int8_t> w(c.n * 27);
    std::vector<uint16_t> wb(c.n * 27);
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = static_cast<int8_t>(int(i * 37 % 255) - 127);
      wb[i] = toBf16(float(w[i]) / 256);
    }
    PointwiseInt8Params p;
    p.scale.assign(c.n, 0.002f);
    p.biasScaled.assign(c.n, 100.0f);
    p.lo = -1e30f;
    p.hi = 1e30f;
    const int64_t out = c.images * g.outHeight * g.outWidth * c.n;
    auto a = StemConvAmx::createInt8(g, c.n, w, p, c.threads);
    auto b = StemConvAmx::createInt8(g, c.n, w, p, c.threads);
    ASSERT_TRUE(a && b && b->readF32Source(scale));
    std::vector<uint8_t> ya(out), yb(out);
    a->run(q.data(), ya.data(), c.images);
    b->run(x.data(), yb.data(), c.images);
    EXPECT_EQ(ya, yb);
    std::vector<float> bias(c.n, 0.25f);
    auto d = StemConvAmx::createBf16(g, c.n, wb, bias, false, 0, 0, c.threads);
    auto e = StemConvAmx::createBf16(g, c.n, wb, bias, false, 0, 0, c.threads);
    ASSERT_TRUE(d && e && e->readF32Source(1.0f));
    std::vector<uint16_t> hd(out), he(out);
    d->run(h.data(), hd.data(), c.images);
    e->run(x.data(), he.data(), c.images);
    EXPECT_EQ(hd, he);
  }
}

TEST(StemAmx, RejectsWhatItDoesNotTake) {
  if (!stemAmxEnabled())
    GTEST_SKIP() << "no AMX here";
  Case c{4, 16, 16, 2, 1, 32, 1, false, 1}; // 36 window values > 32
  std::vector<int8_t> w(32 * 36, 1);
  PointwiseInt8Params p;
  p.scale.assign(32, 1.0f);
  EXPECT_FALSE(StemConvAmx::createInt8(geometry(c), 32, w, p, 1));
  c = {3, 16, 16, 2, 2, 32, 1, false, 1}; // a pad of 2
  w.assign(32 * 27, 1);
  EXPECT_FALSE(StemConvAmx::createInt8(geometry(c), 32, w, p, 1));
}

// GOPT_STEM_AMX_BENCH=1: the time of MobileNetV2's stem a image (minimum
// of 200 calls), for A/B of the kernel itself.
TEST(StemAmx, Timing) {
  if (!stemAmxEnabled() || !std::getenv("GOPT_STEM_AMX_BENCH"))
    GTEST_SKIP() << "GOPT_STEM_AMX_BENCH not set";
  const Case c{3, 224, 224, 2, 1, 32, 1, false, 1};
  const StemGeometry g = geometry(c);
  std::vector<int8_t> w(32 * 27, 3);
  std::vector<uint8_t> x(224 * 224 * 3, 7), dst(112 * 112 * 32);
  std::vector<uint16_t> xb(224 * 224 * 3, 0x3F80), wb(32 * 27, 0x3F00),
      db(112 * 112 * 32);
  PointwiseInt8Params p;
  p.scale.assign(32, 0.01f);
  p.dstUnsigned = true;
  p.lo = 0;
  p.hi = 60;
  auto i8 = StemConvAmx::createInt8(g, 32, w, p, 1);
  auto bf = StemConvAmx::createBf16(g, 32, wb, std::vector<float>(32, 0.1f),
                                    true, 0, 6, 1);
  ASSERT_TRUE(i8 && bf);
  auto time = [](auto &&f) {
    double best = 1e9;
    for (int i = 0; i < 200; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - t0)
                                .count());
    }
    return best;
  };
  std::printf("stem int8 %.1f us, bf16 %.1f us an image\n",
              time([&] { i8->run(x.data(), dst.data(), 1); }),
              time([&] { bf->run(xb.data(), db.data(), 1); }));
  // The same from the f32 image (readF32Source), and the conversions
  // alone (what the network input's separate quantize or cast costs).
  std::vector<float> rgb(3 * 224 * 224, 0.5f);
  std::vector<int8_t> q(rgb.size());
  std::vector<uint16_t> h(rgb.size());
  const double convertInt8 = time([&] {
    gopt::runtime::cpu::rgbToInt8Pixels(rgb.data(), 224 * 224, q.data(),
                                        224 * 224, 20.0f);
  });
  const double convertBf16 = time([&] {
    gopt::runtime::cpu::rgbToBf16Pixels(rgb.data(), 224 * 224, h.data(),
                                        224 * 224);
  });
  ASSERT_TRUE(i8->readF32Source(20.0f) && bf->readF32Source(1.0f));
  std::printf("from f32: stem int8 %.1f us, bf16 %.1f us; conversions "
              "alone %.1f us, %.1f us an image\n",
              time([&] { i8->run(rgb.data(), dst.data(), 1); }),
              time([&] { bf->run(rgb.data(), db.data(), 1); }), convertInt8,
              convertBf16);
}

} // namespace
