//===- StemConvF32Test.cpp - gopt's f32 stem convolution vs. a double loop ===//
//
// runtime/src/cpu/StemConvF32.cpp runs a network's first convolution (1-4
// input channels in plain NCHW) into NHWC or nChw16c; it must compute what a
// double-precision loop does on every path: 3x3 stride 2 (the constant-offset
// tiles) and other windows and strides, padding on every edge, 16-64 output
// channels (tiles of 24, 12, 8 and 6 pixels and their remainders), bias,
// clamps and HardSwish, both filter layouts, several images, one thread or
// two. Then in a plan: taken for MobileNet's stem, which then reads the
// input without a reorder, and GOPT_STEM_CONV_F32=0.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/StemConvF32.h"
#include "TestUtil.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
using gopt::runtime::cpu::StemConvF32;
using gopt::runtime::cpu::StemConvF32Shape;

namespace {

StemConvF32Shape shape(int64_t n, int64_t cin, int64_t h, int64_t w,
                       int64_t cout, int64_t k, int64_t stride, int64_t pad,
                       bool blocked) {
  StemConvF32Shape s;
  s.n = n;
  s.cin = cin;
  s.h = h;
  s.w = w;
  s.cout = cout;
  s.kh = s.kw = k;
  s.strideH = s.strideW = stride;
  s.padTop = s.padLeft = pad;
  s.oh = (h + 2 * pad - k) / stride + 1;
  s.ow = (w + 2 * pad - k) / stride + 1;
  s.blocked = blocked;
  return s;
}

// Largest |kernel - double loop| over the result.
double maxError(const StemConvF32Shape &s, int threads) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> filter(s.cout * s.cin * s.kh * s.kw), bias(s.cout),
      src(s.n * s.cin * s.h * s.w), dst(s.n * s.cout * s.oh * s.ow, 1e30f);
  for (float &v : filter)
    v = u(rng);
  for (float &v : bias)
    v = u(rng);
  for (float &v : src)
    v = u(rng);
  std::unique_ptr<StemConvF32> k =
      StemConvF32::create(s, filter.data(), s.bias ? bias.data() : nullptr);
  EXPECT_TRUE(k);
  if (!k)
    return 1e9;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  k->run(src.data(), dst.data());
  omp_set_num_threads(saved);
  double worst = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.cout; ++o)
      for (int64_t y = 0; y < s.oh; ++y)
        for (int64_t x = 0; x < s.ow; ++x) {
          double acc = s.bias ? bias[o] : 0.0;
          for (int64_t c = 0; c < s.cin; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t iy = y * s.strideH - s.padTop + ky,
                              ix = x * s.strideW - s.padLeft + kx;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                const float f =
                    s.oihw
                        ? filter[((o * s.cin + c) * s.kh + ky) * s.kw + kx]
                        : filter[((ky * s.kw + kx) * s.cin + c) * s.cout + o];
                acc += double(f) * src[((n * s.cin + c) * s.h + iy) * s.w + ix];
              }
          acc = std::min(std::max(acc, double(s.lo)), double(s.hi));
          if (s.hardswish)
            acc *= std::min(std::max(acc / 6 + 0.5, 0.0), 1.0);
          const int64_t pixels = s.oh * s.ow, p = y * s.ow + x;
          const int64_t i =
              s.blocked
                  ? ((n * (s.cout / 16) + o / 16) * pixels + p) * 16 + o % 16
                  : (n * pixels + p) * s.cout + o;
          worst = std::max(worst, std::fabs(acc - dst[i]));
        }
  return worst;
}

TEST(StemConvF32, MatchesDoubleLoop) {
  for (bool blocked : {false, true}) {
    // MobileNetV2's stem on a small odd image: 3x3 stride 2, pad 1, relu6.
    StemConvF32Shape s = shape(1, 3, 23, 29, 32, 3, 2, 1, blocked);
    s.bias = true;
    s.lo = 0;
    s.hi = 6;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    // MobileNetV3's: 16 channels, HardSwish, no bias, HWIO, two images.
    s = shape(2, 3, 20, 20, 16, 3, 2, 1, blocked);
    s.hardswish = true;
    s.oihw = false;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    // The run-time window and stride: 7x7 stride 2 pad 3 on one channel
    // (48 channels: tiles of 8), 5x5 stride 1 on 4 (64: tiles of 6), 3x3
    // stride 3 without padding, clamp [-0.5, 0.5] then HardSwish.
    s = shape(1, 1, 17, 15, 48, 7, 2, 3, blocked);
    s.bias = true;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    s = shape(1, 4, 9, 31, 64, 5, 1, 2, blocked);
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
    s = shape(1, 2, 16, 16, 32, 3, 3, 0, blocked);
    s.lo = -0.5f;
    s.hi = 0.5f;
    s.hardswish = true;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
  }
}

TEST(StemConvF32, RefusesUncoveredShapes) {
  std::vector<float> f(64 * 5 * 9);
  EXPECT_FALSE(StemConvF32::create(shape(1, 5, 8, 8, 32, 3, 2, 1, false),
                                   f.data(), nullptr)); // 5 channels
  EXPECT_FALSE(StemConvF32::create(shape(1, 3, 8, 8, 24, 3, 2, 1, false),
                                   f.data(), nullptr)); // 24 outputs
  EXPECT_FALSE(StemConvF32::create(shape(1, 3, 8, 8, 80, 3, 2, 1, false),
                                   f.data(), nullptr)); // 80 outputs
  StemConvF32Shape s = shape(1, 3, 8, 8, 32, 3, 2, 1, false);
  s.bias = true;
  EXPECT_FALSE(StemConvF32::create(s, f.data(), nullptr)); // bias missing
}

const DType F32 = DType::kF32;

struct Outcome {
  std::string impl;
  bool reorder = false; // a reorder step ran
  float maxDiff = 0;
};

// conv2d 3 -> 32, 3x3 stride 2 pad 1 on a 1x3x33x33 input, then `act`
// ("relu6" or "hard_swish"), on "cpu" and "reference".
Outcome runPlanStem(const char *act) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {1, 3, 33, 33});
  std::vector<int> ins = {x, b.addConstant("f", randomF32({32, 3, 3, 3}, 41)),
                          b.addConstant("bias", randomF32({32}, 42))};
  Shape yshape = {1, 32, 17, 17};
  int c = b.addIntermediate("c", F32, yshape);
  b.addOp("conv2d", "conv", ins, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"strides", intsAttr({2, 2})},
           {"pads", intsAttr({1, 1, 1, 1})},
           {"activation", stringAttr("none")}});
  int y = b.addOutput("y", F32, yshape);
  b.addOp(act, "act", {c}, {y});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  Outcome o;
  if (!plan.ok())
    return o;
  std::vector<Tensor> inputs = {randomF32({1, 3, 33, 33}, 43)};
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult cpu = runPlan(*plan, "cpu", inputs);
  if (ref.outputs.size() != 1 || cpu.outputs.size() != 1)
    return o;
  o.maxDiff = maxAbsDiff(ref.outputs[0], cpu.outputs[0]);
  for (const OpProfile &p : cpu.profiles) {
    if (p.kind.rfind("conv2d", 0) == 0)
      o.impl = p.implementation;
    if (p.name == "reorder:x")
      o.reorder = true;
  }
  return o;
}

TEST(StemConvF32, WhereItIsTaken) {
  for (const char *act : {"relu6", "hard_swish"}) {
    Outcome on = runPlanStem(act);
    EXPECT_EQ(on.impl, "gopt-stem-f32") << act;
    EXPECT_FALSE(on.reorder) << act;
    EXPECT_LT(on.maxDiff, 1e-4f) << act;
  }
  setenv("GOPT_STEM_CONV_F32", "0", 1);
  Outcome off = runPlanStem("relu6");
  EXPECT_NE(off.impl, "gopt-stem-f32");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_STEM_CONV_F32");
}

} // namespace
