//===- ConvBatch1Test.cpp - Batch-1 direct convolution vs. double loops ---===//
//
// gopt's batch-1 direct convolution (runtime/src/cpu/ConvBatch1.cpp) against
// a double-precision loop: odd channel counts (a 16-channel slice after a
// 128-channel one, an odd number of 64-channel blocks for two threads),
// strides, asymmetric and no padding, 1x1 and 3x3 windows, more than one
// 64-pixel panel, bias, an in-place residual, relu and both filter layouts;
// and, through a plan, where the CPU backend takes it.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/ConvBatch1.h"
#include "TestUtil.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
using gopt::runtime::cpu::ConvBatch1;
using gopt::runtime::cpu::ConvBatch1Shape;

namespace {

// Largest |kernel - double loop| over the result, for `s` on random data.
double maxError(const ConvBatch1Shape &s, int threads) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> f(s.cout * s.cin * s.kh * s.kw), x(s.h * s.w * s.cin),
      b(s.cout);
  // Scaled so results stay near 1 (the tolerance is absolute).
  for (float &v : f)
    v = u(rng) / 16.0f;
  for (float &v : x)
    v = u(rng);
  for (float &v : b)
    v = u(rng);
  std::unique_ptr<ConvBatch1> conv = ConvBatch1::create(s, f.data());
  if (!conv)
    return -1;
  const int64_t oh = s.outH(), ow = s.outW();
  std::vector<float> residual(oh * ow * s.cout);
  for (float &v : residual)
    v = u(rng);
  std::vector<float> y = residual;
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  conv->run(x.data(), s.bias ? b.data() : nullptr, y.data());
  omp_set_num_threads(before);
  double worst = 0;
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox)
      for (int64_t o = 0; o < s.cout; ++o) {
        double acc = s.bias ? b[o] : 0.0;
        for (int64_t a = 0; a < s.kh; ++a)
          for (int64_t c = 0; c < s.kw; ++c) {
            int64_t iy = oy * s.stride - s.padT + a;
            int64_t ix = ox * s.stride - s.padL + c;
            if (iy < 0 || ix < 0 || iy >= s.h || ix >= s.w)
              continue;
            for (int64_t i = 0; i < s.cin; ++i) {
              float w = s.oihw ? f[((o * s.cin + i) * s.kh + a) * s.kw + c]
                               : f[((a * s.kw + c) * s.cin + i) * s.cout + o];
              acc += double(x[(iy * s.w + ix) * s.cin + i]) * w;
            }
          }
        int64_t at = (oy * ow + ox) * s.cout + o;
        if (s.sum)
          acc += residual[at];
        if (s.relu)
          acc = std::max(acc, 0.0);
        worst = std::max(worst, std::fabs(acc - double(y[at])));
      }
  return worst;
}

ConvBatch1Shape shape(int64_t cin, int64_t cout, int64_t h, int64_t w,
                      int64_t k, int64_t stride, int64_t pad) {
  ConvBatch1Shape s;
  s.cin = cin;
  s.cout = cout;
  s.h = h;
  s.w = w;
  s.kh = s.kw = k;
  s.stride = stride;
  s.padT = s.padL = s.padB = s.padR = pad;
  return s;
}

bool haveAvx512() { return __builtin_cpu_supports("avx512f"); }

TEST(ConvBatch1, MatchesDoubleLoop) {
  if (!haveAvx512())
    GTEST_SKIP() << "no AVX-512";
  // 512 -> 512 at 7x7 with bias, residual and relu (ResNet's layer 4).
  ConvBatch1Shape wide = shape(512, 512, 7, 7, 3, 1, 1);
  wide.bias = wide.sum = wide.relu = true;
  for (int threads : {1, 2})
    EXPECT_LT(maxError(wide, threads), 1e-4) << threads;
  // 144 -> 192 at 13x9, stride 2: a 16-channel slice, three blocks over two
  // threads, no bias, HWIO.
  ConvBatch1Shape odd = shape(144, 192, 13, 9, 3, 2, 1);
  odd.oihw = false;
  for (int threads : {1, 2})
    EXPECT_LT(maxError(odd, threads), 1e-4) << threads;
  // 1x1 stride 2 without padding (a downsample), 196 pixels: 4 panels.
  ConvBatch1Shape down = shape(128, 256, 28, 28, 1, 2, 0);
  down.bias = true;
  EXPECT_LT(maxError(down, 2), 1e-4);
  // Asymmetric padding (TensorFlow's SAME at stride 2): none before.
  ConvBatch1Shape same = shape(256, 64, 14, 14, 3, 2, 0);
  same.padB = same.padR = 1;
  same.relu = true;
  EXPECT_EQ(same.outH(), 7);
  EXPECT_LT(maxError(same, 1), 1e-4);
}

TEST(ConvBatch1, RejectsUncoveredShapes) {
  std::vector<float> f(64 * 64 * 9, 0.0f);
  ConvBatch1Shape s = shape(40, 64, 7, 7, 3, 1, 1); // cin not 16k
  EXPECT_EQ(ConvBatch1::create(s, f.data()), nullptr);
  s = shape(64, 48, 7, 7, 3, 1, 1); // cout not 64k
  EXPECT_EQ(ConvBatch1::create(s, f.data()), nullptr);
  s = shape(64, 64, 2, 2, 5, 1, 0); // empty result
  EXPECT_EQ(ConvBatch1::create(s, f.data()), nullptr);
}

// Through a plan: conv2d [+ add + relu] at batch 1, "cpu" against
// "reference"; the conv step's implementation.
std::string planImpl(int64_t cin, int64_t cout, int64_t h, int64_t k,
                     int64_t stride, float *maxDiff) {
  PlanBuilder b("g");
  int x = b.addInput("x", DType::kF32, {1, cin, h, h});
  Tensor filter = randomF32({cout, cin, k, k}, 31);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 16.0f;
  int64_t pad = k / 2, oh = (h + 2 * pad - k) / stride + 1;
  std::vector<int> ins = {x, b.addConstant("f", filter),
                          b.addConstant("bias", randomF32({cout}, 32))};
  int y = b.addOutput("y", DType::kF32, {1, cout, oh, oh});
  b.addOp("conv2d", "conv", ins, {y},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"strides", intsAttr({stride, stride})},
           {"pads", intsAttr({pad, pad, pad, pad})},
           {"activation", stringAttr("relu")}});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  if (!plan.ok())
    return "";
  std::vector<Tensor> inputs = {randomF32({1, cin, h, h}, 33)};
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult cpu = runPlan(*plan, "cpu", inputs);
  if (ref.outputs.size() != 1 || cpu.outputs.size() != 1)
    return "";
  *maxDiff = maxAbsDiff(ref.outputs[0], cpu.outputs[0]);
  for (const OpProfile &p : cpu.profiles)
    if (p.kind.rfind("conv2d", 0) == 0)
      return p.implementation;
  return "";
}

// Taken for at least 128 input channels and at most 64 result pixels (a
// 1x1 window only with a stride); GOPT_CONV_BATCH1=0 keeps oneDNN's.
TEST(ConvBatch1, WhereItIsTaken) {
  if (!haveAvx512())
    GTEST_SKIP() << "no AVX-512";
  // The 7x7 3x3 layer goes to gopt's Winograd kernel where the machine
  // reads its filter fast (winogradWideFewTilesPays): a slow rate here.
  setenv("GOPT_STREAM_GBPS", "10", 1);
  float diff = 1;
  EXPECT_EQ(planImpl(512, 512, 7, 3, 1, &diff), "conv-batch1");
  EXPECT_LT(diff, 1e-4f);
  EXPECT_EQ(planImpl(256, 512, 14, 3, 2, &diff), "conv-batch1");
  EXPECT_LT(diff, 1e-4f);
  EXPECT_EQ(planImpl(256, 512, 14, 1, 2, &diff), "conv-batch1");
  EXPECT_LT(diff, 1e-4f);
  EXPECT_EQ(planImpl(128, 128, 16, 3, 2, &diff), "conv-batch1"); // 8x8
  EXPECT_LT(diff, 1e-4f);
  // 1x1 at stride 1: left to oneDNN or gopt's 1x1 kernel (Conv1x1F32,
  // which takes this 7x7 one).
  EXPECT_NE(planImpl(512, 512, 7, 1, 1, &diff), "conv-batch1");
  EXPECT_LT(diff, 1e-4f);
  EXPECT_EQ(planImpl(64, 128, 14, 3, 2, &diff), "onednn");  // 64 channels
  EXPECT_EQ(planImpl(128, 256, 28, 3, 2, &diff), "onednn"); // 14x14 result
  setenv("GOPT_CONV_BATCH1", "0", 1);
  EXPECT_EQ(planImpl(512, 512, 7, 3, 1, &diff), "onednn");
  EXPECT_LT(diff, 1e-4f);
  unsetenv("GOPT_CONV_BATCH1");
  unsetenv("GOPT_STREAM_GBPS");
}

} // namespace
