//===- InvertedResidualF32Test.cpp - The fused MobileNet block vs. a loop -===//
//
// InvertedResidualF32 against a double-precision loop over the three
// convolutions: with and without the expand stage, strides 1 and 2, 3x3
// and 5x5 windows, channel counts off the 16-lane vector (hidden 40, out
// 24), widths around the GEMM's row blocks (1, 7, 13, 56), relu6 and
// other clamps, a residual (sum) both in place and in a separate
// destination, 1 to 3 threads. Skipped where the CPU has no AVX-512F.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/InvertedResidualF32.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using gopt::runtime::cpu::InvertedResidualF32;
using gopt::runtime::cpu::invertedResidualF32Enabled;
using gopt::runtime::cpu::InvertedResidualShape;
using gopt::runtime::cpu::InvertedResidualStage;

namespace {

struct Case {
  int64_t h, w, cin, hidden, cout, k, stride;
  bool expand, sum, inPlace, clip;
  int threads;
};

std::vector<float> random(size_t n, std::mt19937 &rng, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

double clampD(double v, float lo, float hi) {
  return std::min<double>(std::max<double>(v, lo), hi);
}

void check(const Case &c) {
  SCOPED_TRACE(testing::Message()
               << "h=" << c.h << " w=" << c.w << " cin=" << c.cin
               << " hidden=" << c.hidden << " cout=" << c.cout << " k=" << c.k
               << " stride=" << c.stride << " expand=" << c.expand
               << " sum=" << c.sum << " inPlace=" << c.inPlace
               << " threads=" << c.threads);
  std::mt19937 rng(static_cast<unsigned>(c.h * 131 + c.w * 17 + c.cin +
                                         c.hidden * 7 + c.k + c.stride));
  InvertedResidualShape s;
  s.h = c.h;
  s.w = c.w;
  s.cin = c.cin;
  s.hidden = c.expand ? c.hidden : c.cin;
  s.cout = c.cout;
  s.expand = c.expand;
  s.k = c.k;
  s.stride = c.stride;
  s.padTop = s.padLeft = c.k / 2;
  s.oh = (c.h + 2 * s.padTop - c.k) / c.stride + 1;
  s.ow = (c.w + 2 * s.padLeft - c.k) / c.stride + 1;
  s.sum = c.sum;
  const int64_t hid = s.hidden, taps = c.k * c.k;
  InvertedResidualStage e, d, p;
  if (c.expand) {
    e.weights = random(c.cin * hid, rng, 0.5f);
    e.bias = random(hid, rng, 0.5f);
    e.lo = 0;
    e.hi = 6;
  }
  d.weights = random(taps * hid, rng, 0.5f);
  d.bias = random(hid, rng, 0.5f);
  d.lo = c.clip ? -0.25f : 0;
  d.hi = c.clip ? 0.75f : 6;
  p.weights = random(hid * c.cout, rng, 0.5f);
  if (!c.clip)
    p.bias = random(c.cout, rng, 0.5f); // the clip case has none
  if (c.clip) {
    p.lo = -1;
    p.hi = 1;
  }
  auto kernel = InvertedResidualF32::create(s, e, d, p, c.threads);
  ASSERT_TRUE(kernel);
  std::vector<float> src = random(c.h * c.w * c.cin, rng, 2.0f);
  std::vector<float> residual = random(s.oh * s.ow * c.cout, rng, 1.0f);
  if (c.inPlace)
    residual = src; // shapes match: stride 1, cin == cout

  // The reference, in double.
  std::vector<double> x(c.h * c.w * hid);
  for (int64_t i = 0; i < c.h * c.w; ++i)
    for (int64_t j = 0; j < hid; ++j) {
      if (!c.expand) {
        x[i * hid + j] = src[i * c.cin + j];
        continue;
      }
      double v = e.bias[j];
      for (int64_t q = 0; q < c.cin; ++q)
        v += double(src[i * c.cin + q]) * e.weights[q * hid + j];
      x[i * hid + j] = clampD(v, e.lo, e.hi);
    }
  std::vector<double> y(s.oh * s.ow * hid);
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox)
      for (int64_t j = 0; j < hid; ++j) {
        double v = d.bias[j];
        for (int64_t ky = 0; ky < c.k; ++ky)
          for (int64_t kx = 0; kx < c.k; ++kx) {
            int64_t iy = oy * c.stride - s.padTop + ky;
            int64_t ix = ox * c.stride - s.padLeft + kx;
            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
              continue;
            v += x[(iy * c.w + ix) * hid + j] *
                 double(d.weights[(ky * c.k + kx) * hid + j]);
          }
        y[(oy * s.ow + ox) * hid + j] = clampD(v, d.lo, d.hi);
      }
  std::vector<double> want(s.oh * s.ow * c.cout);
  for (int64_t i = 0; i < s.oh * s.ow; ++i)
    for (int64_t o = 0; o < c.cout; ++o) {
      double v = p.bias.empty() ? 0 : p.bias[o];
      for (int64_t j = 0; j < hid; ++j)
        v += y[i * hid + j] * double(p.weights[j * c.cout + o]);
      if (c.sum)
        v += residual[i * c.cout + o];
      want[i * c.cout + o] = clampD(v, p.lo, p.hi);
    }

  std::vector<float> dst;
  if (c.inPlace) {
    dst = src;
    for (int rep = 0; rep < 1; ++rep)
      kernel->run(dst.data(), dst.data());
  } else {
    dst = c.sum ? residual : std::vector<float>(want.size(), 12345.0f);
    kernel->run(src.data(), dst.data());
  }
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::abs(dst[i] - want[i]) / (1.0 + std::abs(want[i]));
    if (err > 1e-4) {
      ADD_FAILURE() << "element " << i << ": got " << dst[i] << ", want "
                    << want[i];
      return;
    }
  }
}

TEST(InvertedResidualF32, MatchesDoubleLoop) {
  if (!invertedResidualF32Enabled())
    GTEST_SKIP() << "no AVX-512F";
  const Case cases[] = {
      // h  w  cin hid cout k s  expand sum inPlace clip threads
      {56, 56, 24, 144, 24, 3, 1, true, true, true, false, 2},
      {56, 56, 24, 144, 24, 3, 1, true, true, false, false, 3},
      {14, 14, 64, 384, 96, 3, 1, true, false, false, false, 2},
      {7, 7, 160, 960, 160, 3, 1, true, true, true, false, 2},
      {7, 7, 160, 960, 320, 3, 1, true, false, false, false, 1},
      {112, 112, 16, 96, 24, 3, 2, true, false, false, false, 2},
      {28, 28, 32, 192, 64, 3, 2, true, false, false, false, 3},
      {13, 13, 24, 40, 24, 3, 1, true, true, true, true, 3},
      {13, 7, 24, 40, 20, 5, 2, true, false, false, true, 2},
      {9, 13, 16, 48, 16, 5, 1, true, true, true, false, 2},
      {1, 1, 8, 24, 8, 3, 1, true, true, true, false, 2},
      {3, 1, 8, 24, 8, 3, 1, true, true, true, false, 3},
      {1, 7, 8, 24, 5, 3, 2, true, false, false, false, 2},
      {112, 112, 32, 32, 16, 3, 1, false, false, false, false, 2},
      {8, 8, 20, 20, 20, 3, 1, false, true, true, true, 2},
  };
  for (const Case &c : cases)
    check(c);
}

// Which blocks the schedule fuses by default, by the core's L2: 256 KiB and
// up below 2 MiB of L2 (MobileNetV2's 28x28 and 14x14 blocks too), 1 MiB
// and up from 2 MiB or where the size is unknown.
TEST(InvertedResidualF32, MinBytesFollowL2) {
  EXPECT_EQ(gopt::runtime::cpu::invertedResidualMinBytes(1l << 20), 256u << 10);
  EXPECT_EQ(gopt::runtime::cpu::invertedResidualMinBytes(512l << 10),
            256u << 10);
  EXPECT_EQ(gopt::runtime::cpu::invertedResidualMinBytes(2l << 20), 1u << 20);
  EXPECT_EQ(gopt::runtime::cpu::invertedResidualMinBytes(0), 1u << 20);
  EXPECT_EQ(gopt::runtime::cpu::invertedResidualMinBytes(-1), 1u << 20);
}

TEST(InvertedResidualF32, RejectsBadShapes) {
  if (!invertedResidualF32Enabled())
    GTEST_SKIP() << "no AVX-512F";
  InvertedResidualShape s;
  s.h = s.w = 4;
  s.cin = 8;
  s.hidden = 16;
  s.cout = 8;
  s.k = 3;
  s.padTop = s.padLeft = 1;
  s.oh = s.ow = 4;
  InvertedResidualStage e, d, p;
  e.weights.resize(8 * 16);
  d.weights.resize(9 * 16);
  p.weights.resize(16 * 8 - 1); // one short
  EXPECT_FALSE(InvertedResidualF32::create(s, e, d, p, 1));
  p.weights.resize(16 * 8);
  EXPECT_TRUE(InvertedResidualF32::create(s, e, d, p, 1));
  s.expand = false; // hidden != cin without an expand
  EXPECT_FALSE(InvertedResidualF32::create(s, e, d, p, 1));
}

} // namespace
