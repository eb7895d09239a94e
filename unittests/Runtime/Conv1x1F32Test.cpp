//===- Conv1x1F32Test.cpp - gopt's f32 1x1 convolution vs. a double loop --===//
//
// runtime/src/cpu/Conv1x1F32.cpp runs f32 1x1 convolutions (ResNet-50's 7x7
// layers) in nChw16c or NHWC; it must compute what a double-precision loop
// does for every path it has: partial tiles and runs of pixels, a 128-
// channel pass plus a shorter one, output blocks of 16, 48 and 64 channels,
// stride 2, bias, an in-place residual sum, relu, a clamp (relu6),
// HardSwish and SiLU, both filter layouts,
// several images with either work order, one thread or two, items split
// evenly over two threads by shorter runs of pixels, a result
// written into a channel slice of a wider tensor. Then in a plan:
// taken for a 7x7 result (with the residual add and relu fused), not for a
// 28x28 one, and GOPT_CONV_1X1_F32=0 / all; which shapes it is taken for.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/Conv1x1F32.h"
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
using gopt::runtime::cpu::Conv1x1F32;
using gopt::runtime::cpu::Conv1x1F32Shape;

namespace {

// Index of (image, channel, y, x) in nChw16c or NHWC.
int64_t at(const Conv1x1F32Shape &s, int64_t c, int64_t h, int64_t w, int64_t n,
           int64_t ch, int64_t y, int64_t x) {
  if (s.blocked)
    return (((n * (c / 16) + ch / 16) * h + y) * w + x) * 16 + ch % 16;
  return ((n * h + y) * w + x) * c + ch;
}

// Fills a convolution's operands from `rng`, in this order: the filter
// (uniform in (-1, 1) divided by `filterScale`, so results stay near 1),
// the bias and the source (uniform in (-1, 1)).
void fillOperands(std::mt19937 &rng, float filterScale,
                  std::vector<float> &filter, std::vector<float> &bias,
                  std::vector<float> &src) {
  std::uniform_real_distribution<float> u(-1, 1);
  for (float &v : filter)
    v = u(rng) / filterScale;
  for (float &v : bias)
    v = u(rng);
  for (float &v : src)
    v = u(rng);
}

// Largest |kernel - double loop| over the result, run on `threads` threads
// (and created for `createThreads`, where not 0: the split it plans).
double maxError(const Conv1x1F32Shape &s, int threads, int createThreads = 0) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t oh = s.outH(), ow = s.outW();
  std::vector<float> filter(s.cin * s.cout), bias(s.cout),
      src(s.n * s.cin * s.h * s.w), dst(s.n * s.cout * oh * ow);
  fillOperands(rng, 16, filter, bias, src);
  for (float &v : dst) // the residual, with `sum`
    v = u(rng);
  const std::vector<float> residual = dst;
  const int saved = omp_get_max_threads();
  if (createThreads)
    omp_set_num_threads(createThreads);
  std::unique_ptr<Conv1x1F32> k =
      Conv1x1F32::create(s, filter.data(), s.bias ? bias.data() : nullptr);
  omp_set_num_threads(saved);
  EXPECT_TRUE(k);
  if (!k)
    return 1e9;
  omp_set_num_threads(threads);
  k->run(src.data(), dst.data());
  omp_set_num_threads(saved);
  double worst = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.cout; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = s.bias ? bias[o] : 0.0;
          for (int64_t c = 0; c < s.cin; ++c)
            acc +=
                double(s.oihw ? filter[o * s.cin + c]
                              : filter[c * s.cout + o]) *
                src[at(s, s.cin, s.h, s.w, n, c, y * s.strideH, x * s.strideW)];
          const int64_t i = at(s, s.cout, oh, ow, n, o, y, x);
          if (s.sum)
            acc += residual[i];
          if (s.relu)
            acc = std::max(acc, 0.0);
          if (s.clip)
            acc = std::min(std::max(acc, double(s.lo)), double(s.hi));
          if (s.hardswish)
            acc *= std::min(std::max(acc / 6 + 0.5, 0.0), 1.0);
          if (s.silu)
            acc /= 1.0 + std::exp(-acc);
          worst = std::max(worst, std::fabs(acc - dst[i]));
        }
  return worst;
}

Conv1x1F32Shape shape(int64_t n, int64_t cin, int64_t cout, int64_t h,
                      int64_t w, int64_t stride, bool blocked) {
  Conv1x1F32Shape s;
  s.n = n;
  s.cin = cin;
  s.cout = cout;
  s.h = h;
  s.w = w;
  s.strideH = s.strideW = stride;
  s.blocked = blocked;
  return s;
}

TEST(Conv1x1F32, MatchesDoubleLoop) {
  for (bool blocked : {true, false}) {
    // 7x7: 49 pixels in tiles of 5 and 6; 144 input channels: a 128-channel
    // pass and a 16-channel one; 176 output channels: blocks of 64, 64, 48.
    Conv1x1F32Shape s = shape(1, 144, 176, 7, 7, 1, blocked);
    s.bias = s.relu = true;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    // 11x13: two runs of pixels (96 + 47); 80 channels: 64 + 16; HWIO; a
    // residual sum without bias.
    s = shape(1, 64, 80, 11, 13, 1, blocked);
    s.oihw = false;
    s.sum = true;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    // Stride 2 on an odd size, three images, three passes (128 + 128 +
    // 16 channels): 13x13 -> 7x7 (blocks outermost) and 20x20 -> 10x10
    // (images outermost).
    for (int64_t h : {13, 20}) {
      s = shape(3, 272, 128, h, h, 2, blocked);
      s.bias = s.sum = s.relu = true;
      EXPECT_LT(maxError(s, 2), 1e-4) << blocked << " " << h;
    }
  }
}

// Few output blocks on two threads: MobileNetV3's 7x7 projection to 160
// channels is three blocks (64, 64, 32) of one run; planned for two threads
// it runs a quarter of the pixels per item (13, 12, 12, 12), the threads
// taking uneven counts of items. Planned for two threads and run on one,
// the items are split by count. One block per thread already splits
// evenly: a whole run.
TEST(Conv1x1F32, SplitsFewBlocksEvenly) {
  const int saved = omp_get_max_threads();
  for (bool blocked : {true, false}) {
    Conv1x1F32Shape s = shape(1, 960, 160, 7, 7, 1, blocked);
    s.bias = s.sum = true;
    EXPECT_LT(maxError(s, 2, 2), 1e-4) << blocked;
    EXPECT_LT(maxError(s, 1, 2), 1e-4) << blocked;
    std::vector<float> filter(s.cin * s.cout, 0.01f);
    omp_set_num_threads(2);
    EXPECT_EQ(
        Conv1x1F32::create(s, filter.data(), filter.data())->pixelsPerRun(),
        13);
    s.cout = 128;
    EXPECT_EQ(
        Conv1x1F32::create(s, filter.data(), filter.data())->pixelsPerRun(),
        96);
    omp_set_num_threads(saved);
  }
}

// Into a channel slice of a wider nChw16c tensor (a concat's destination:
// SqueezeNet's expand1x1 layers at batch > 1): each image's result starts
// dstImageStride floats after the last one's, and the channels outside the
// slice keep what they held.
TEST(Conv1x1F32, WritesIntoAChannelSlice) {
  const int64_t n = 3, cin = 32, cout = 32, h = 9, w = 9, total = 80,
                offset = 16, pixels = h * w;
  Conv1x1F32Shape s = shape(n, cin, cout, h, w, 1, /*blocked=*/true);
  s.bias = s.relu = true;
  s.dstImageStride = total * pixels;
  std::mt19937 rng(11);
  std::vector<float> filter(cin * cout), bias(cout), src(n * cin * pixels);
  fillOperands(rng, 8, filter, bias, src);
  std::unique_ptr<Conv1x1F32> k =
      Conv1x1F32::create(s, filter.data(), bias.data());
  if (!k)
    GTEST_SKIP() << "no AVX-512";
  const float untouched = 7.0f;
  std::vector<float> dst(n * total * pixels, untouched);
  k->run(src.data(), dst.data() + offset * pixels);
  double worst = 0;
  int64_t changedOutside = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < total; ++c)
      for (int64_t p = 0; p < pixels; ++p) {
        const float got = dst[at(s, total, h, w, i, c, p / w, p % w)];
        if (c < offset || c >= offset + cout) {
          changedOutside += got != untouched;
          continue;
        }
        double acc = bias[c - offset];
        for (int64_t ci = 0; ci < cin; ++ci)
          acc += double(filter[(c - offset) * cin + ci]) *
                 src[at(s, cin, h, w, i, ci, p / w, p % w)];
        worst = std::max(worst, std::fabs(std::max(acc, 0.0) - got));
      }
  EXPECT_LT(worst, 1e-4);
  EXPECT_EQ(changedOutside, 0);
  // Only nChw16c, only without the pool, never less than a dense result.
  Conv1x1F32Shape nhwc = s;
  nhwc.blocked = false;
  EXPECT_FALSE(Conv1x1F32::create(nhwc, filter.data(), bias.data()));
  Conv1x1F32Shape small = s;
  small.dstImageStride = cout * pixels - 16;
  EXPECT_FALSE(Conv1x1F32::create(small, filter.data(), bias.data()));
  Conv1x1F32Shape pooled = s;
  pooled.pool = true;
  EXPECT_FALSE(Conv1x1F32::create(pooled, filter.data(), bias.data()));
}

// MobileNets' 7x7 layers: relu6 (a clamp) on MobileNetV2's expand and last
// 1x1, HardSwish on MobileNetV3's (after no clamp, or after a clip); two
// 128-channel passes, so that the epilogue runs on the last one only.
TEST(Conv1x1F32, ClampAndHardSwish) {
  for (bool blocked : {true, false}) {
    Conv1x1F32Shape s = shape(1, 320, 1280, 7, 7, 1, blocked);
    s.bias = s.clip = true;
    s.lo = 0;
    s.hi = 6;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
    s = shape(1, 160, 960, 7, 7, 1, blocked);
    s.bias = s.hardswish = true;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    s.clip = true;
    s.lo = -0.5f;
    s.hi = 0.25f;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
  }
}

// Largest |kernel - double loop| of `pool`: each image's mean over the
// pixels of the activated result, [n][cout] (any cout).
double maxPoolError(const Conv1x1F32Shape &s, int threads) {
  std::mt19937 rng(9);
  const int64_t oh = s.outH(), ow = s.outW();
  std::vector<float> filter(s.cin * s.cout), bias(s.cout),
      src(s.n * s.cin * s.h * s.w), dst(s.n * s.cout + 16, 1e9f);
  fillOperands(rng, 16, filter, bias, src);
  std::unique_ptr<Conv1x1F32> k =
      Conv1x1F32::create(s, filter.data(), s.bias ? bias.data() : nullptr);
  EXPECT_TRUE(k);
  if (!k)
    return 1e9;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  k->run(src.data(), dst.data());
  omp_set_num_threads(saved);
  double worst = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.cout; ++o) {
      double mean = 0;
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = s.bias ? bias[o] : 0.0;
          for (int64_t c = 0; c < s.cin; ++c)
            acc +=
                double(s.oihw ? filter[o * s.cin + c]
                              : filter[c * s.cout + o]) *
                src[at(s, s.cin, s.h, s.w, n, c, y * s.strideH, x * s.strideW)];
          if (s.relu)
            acc = std::max(acc, 0.0);
          if (s.clip)
            acc = std::min(std::max(acc, double(s.lo)), double(s.hi));
          if (s.hardswish)
            acc *= std::min(std::max(acc / 6 + 0.5, 0.0), 1.0);
          if (s.silu)
            acc /= 1.0 + std::exp(-acc);
          mean += acc;
        }
      mean /= double(oh * ow);
      worst = std::max(worst, std::fabs(mean - dst[n * s.cout + o]));
    }
  // Nothing written past the [n][cout] result.
  for (int64_t i = s.n * s.cout; i < s.n * s.cout + 16; ++i)
    if (dst[i] != 1e9f)
      return 1e9;
  return worst;
}

// The global average pool fused: SqueezeNet's classifier (13x13, 1000
// channels: a last block of 40 of which 8 past the filter; two runs of
// pixels summed into one block's sums; four passes), MobileNetV3's last
// layer (7x7, HardSwish), stride 2 and NHWC, two images, two threads;
// EfficientNet-B0's head (SiLU).
TEST(Conv1x1F32, GlobalPoolFused) {
  for (bool blocked : {true, false}) {
    Conv1x1F32Shape s = shape(1, 512, 1000, 13, 13, 1, blocked);
    s.bias = s.relu = s.pool = true;
    EXPECT_LT(maxPoolError(s, 1), 1e-4) << blocked;
    s = shape(2, 160, 200, 7, 7, 1, blocked);
    s.bias = s.hardswish = s.pool = true;
    EXPECT_LT(maxPoolError(s, 2), 1e-4) << blocked;
    s = shape(2, 48, 72, 11, 12, 2, blocked);
    s.oihw = false;
    s.clip = s.pool = true;
    s.lo = -0.25f;
    s.hi = 0.5f;
    EXPECT_LT(maxPoolError(s, 2), 1e-4) << blocked;
    // EfficientNet-B0's head: 320 -> 1280 on 7x7, SiLU, then the pool.
    s = shape(1, 320, 1280, 7, 7, 1, blocked);
    s.bias = s.silu = s.pool = true;
    EXPECT_LT(maxPoolError(s, 2), 1e-4) << blocked;
  }
}

// EfficientNet-B0's 7x7 layers with SiLU: the head (320 -> 1280: three
// passes, the SiLU on the last one only) and the expand ones (192 -> 1152);
// results from -8 to 8, so both of SiLU's tails are checked.
TEST(Conv1x1F32, Silu) {
  for (bool blocked : {true, false}) {
    Conv1x1F32Shape s = shape(1, 320, 1280, 7, 7, 1, blocked);
    s.bias = s.silu = true;
    EXPECT_LT(maxError(s, 1), 1e-4) << blocked;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
    s = shape(1, 192, 1152, 7, 7, 1, blocked);
    s.silu = true;
    EXPECT_LT(maxError(s, 2), 1e-4) << blocked;
  }
}

TEST(Conv1x1F32, RefusesUncoveredShapes) {
  std::vector<float> f(64 * 72);
  EXPECT_FALSE(Conv1x1F32::create(shape(1, 72, 64, 7, 7, 1, false), f.data(),
                                  nullptr)); // 72 channels: not blocks of 16
  EXPECT_FALSE(Conv1x1F32::create(shape(1, 64, 64, 7, 7, 3, false), f.data(),
                                  nullptr)); // stride 3
  Conv1x1F32Shape s = shape(1, 64, 64, 7, 7, 1, false);
  s.bias = true;
  EXPECT_FALSE(Conv1x1F32::create(s, f.data(), nullptr)); // bias missing
}

// One image's 7x7 result in either layout, several images' in NHWC; not
// 14x14, nor several images on nChw16c (oneDNN's jit_1x1 was as fast).
TEST(Conv1x1F32, PreferredShapes) {
  using gopt::runtime::cpu::conv1x1F32Preferred;
  EXPECT_TRUE(conv1x1F32Preferred(shape(1, 2048, 512, 7, 7, 1, true)));
  EXPECT_TRUE(conv1x1F32Preferred(shape(1, 1024, 2048, 14, 14, 2, false)));
  EXPECT_TRUE(conv1x1F32Preferred(shape(8, 512, 2048, 7, 7, 1, false)));
  EXPECT_FALSE(conv1x1F32Preferred(shape(8, 512, 2048, 7, 7, 1, true)));
  EXPECT_FALSE(conv1x1F32Preferred(shape(1, 1024, 256, 14, 14, 1, false)));
}

const DType F32 = DType::kF32;

// A 1x1 conv2d + add of a residual input + relu on "cpu" and "reference".
CpuOutcome runPlanConv(int64_t cin, int64_t cout, int64_t h) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {1, cin, h, h});
  Tensor filter = randomF32({cout, cin, 1, 1}, 31);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 16.0f;
  std::vector<int> ins = {x, b.addConstant("f", filter),
                          b.addConstant("bias", randomF32({cout}, 32))};
  Shape yshape = {1, cout, h, h};
  int r = b.addInput("r", F32, yshape);
  int c = b.addIntermediate("c", F32, yshape);
  b.addOp("conv2d", "conv", ins, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({0, 0, 0, 0})},
           {"activation", stringAttr("none")}});
  int s = b.addIntermediate("s", F32, yshape);
  b.addOp("add", "add", {c, r}, {s});
  int y = b.addOutput("y", F32, yshape);
  b.addOp("relu", "relu", {s}, {y});
  std::vector<Tensor> inputs = {randomF32({1, cin, h, h}, 33),
                                randomF32(yshape, 34)};
  return cpuAgainstReference(b, inputs, "conv2d");
}

// `act` of `x` into `y`: an op of that kind, or for "silu" x * sigmoid(x),
// as EfficientNet's ONNX files spell SiLU.
void addActivation(PlanBuilder &b, const std::string &act, int x, int y,
                   const Shape &shape) {
  if (act == "silu") {
    int g = b.addIntermediate("g", F32, shape);
    b.addOp("sigmoid", "sigmoid", {x}, {g});
    b.addOp("mul", "mul", {x, g}, {y});
  } else {
    b.addOp(act, "act", {x}, {y});
  }
}

// A 1x1 conv2d 320 -> 1280 on 7x7 then `act` (relu6: MobileNetV2's last
// layer; hard_swish: MobileNetV3's; silu: EfficientNet-B0's) on "cpu" and
// "reference".
CpuOutcome runPlanConvAct(const char *act) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {1, 320, 7, 7});
  Tensor filter = randomF32({1280, 320, 1, 1}, 35);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 4.0f;
  std::vector<int> ins = {x, b.addConstant("f", filter),
                          b.addConstant("bias", randomF32({1280}, 36))};
  Shape yshape = {1, 1280, 7, 7};
  int c = b.addIntermediate("c", F32, yshape);
  b.addOp("conv2d", "conv", ins, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({0, 0, 0, 0})},
           {"activation", stringAttr("none")}});
  int y = b.addOutput("y", F32, yshape);
  addActivation(b, act, c, y, yshape);
  std::vector<Tensor> inputs = {randomF32({1, 320, 7, 7}, 37)};
  return cpuAgainstReference(b, inputs, "conv2d");
}

TEST(Conv1x1F32, TakesClampAndHardSwishLayers) {
  for (const char *act : {"relu6", "hard_swish"}) {
    CpuOutcome on = runPlanConvAct(act);
    EXPECT_EQ(on.impl, "gopt-1x1-f32") << act;
    EXPECT_EQ(on.kind, std::string("conv2d+") + act);
    EXPECT_LT(on.maxDiff, 1e-4f) << act;
  }
  setenv("GOPT_CONV_1X1_F32_CLAMP", "0", 1);
  CpuOutcome off = runPlanConvAct("relu6");
  EXPECT_NE(off.impl, "gopt-1x1-f32");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_1X1_F32_CLAMP");
}

// A 1x1 conv2d 160 -> 1000 on 13x13, `act` (relu: SqueezeNet's classifier
// with fewer input channels; silu: as EfficientNet-B0's head), global
// average pool and flatten, on "cpu" and "reference".
CpuOutcome runPlanConvPool(const std::string &act = "relu") {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {1, 160, 13, 13});
  Tensor filter = randomF32({1000, 160, 1, 1}, 51);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 16.0f;
  std::vector<int> ins = {x, b.addConstant("f", filter),
                          b.addConstant("bias", randomF32({1000}, 52))};
  Shape cshape = {1, 1000, 13, 13};
  int c = b.addIntermediate("c", F32, cshape);
  b.addOp("conv2d", "conv", ins, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({0, 0, 0, 0})},
           {"activation", stringAttr("none")}});
  int r = b.addIntermediate("r", F32, cshape);
  addActivation(b, act, c, r, cshape);
  int p = b.addIntermediate("p", F32, {1, 1000, 1, 1});
  b.addOp("global_avg_pool", "gap", {r}, {p},
          {{"data_format", stringAttr("NCHW")}});
  int y = b.addOutput("y", F32, {1, 1000});
  b.addOp("flatten", "flatten", {p}, {y}, {{"axis", intAttr(1)}});
  std::vector<Tensor> inputs = {randomF32({1, 160, 13, 13}, 53)};
  return cpuAgainstReference(b, inputs, "conv2d");
}

TEST(Conv1x1F32, TakesTheGlobalPool) {
  CpuOutcome on = runPlanConvPool();
  EXPECT_EQ(on.impl, "gopt-1x1-pool-f32");
  EXPECT_EQ(on.kind, "conv2d+relu+global_avg_pool");
  EXPECT_LT(on.maxDiff, 1e-4f);
  setenv("GOPT_CONV_1X1_POOL_F32", "0", 1);
  CpuOutcome off = runPlanConvPool();
  EXPECT_NE(off.impl, "gopt-1x1-pool-f32");
  EXPECT_EQ(off.kind, "conv2d+relu");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_1X1_POOL_F32");
  CpuOutcome silu = runPlanConvPool("silu");
  EXPECT_EQ(silu.impl, "gopt-1x1-pool-f32");
  EXPECT_EQ(silu.kind, "conv2d+sigmoid+mul+global_avg_pool");
  EXPECT_LT(silu.maxDiff, 1e-4f);
}

TEST(Conv1x1F32, TakesSiluLayers) {
  CpuOutcome on = runPlanConvAct("silu");
  EXPECT_EQ(on.impl, "gopt-1x1-f32");
  EXPECT_EQ(on.kind, "conv2d+sigmoid+mul");
  EXPECT_LT(on.maxDiff, 1e-4f);
  setenv("GOPT_CONV_1X1_F32_SILU", "0", 1);
  CpuOutcome off = runPlanConvAct("silu");
  EXPECT_NE(off.impl, "gopt-1x1-f32");
  EXPECT_EQ(off.kind, "conv2d+sigmoid+mul");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_1X1_F32_SILU");
}

TEST(Conv1x1F32, WhereItIsTaken) {
  CpuOutcome small = runPlanConv(512, 256, 7);
  EXPECT_EQ(small.impl, "gopt-1x1-f32");
  EXPECT_EQ(small.kind, "conv2d+add+relu");
  EXPECT_LT(small.maxDiff, 1e-4f);
  EXPECT_NE(runPlanConv(256, 64, 28).impl, "gopt-1x1-f32");
  setenv("GOPT_CONV_1X1_F32", "all", 1);
  CpuOutcome all = runPlanConv(256, 64, 28);
  EXPECT_EQ(all.impl, "gopt-1x1-f32");
  EXPECT_LT(all.maxDiff, 1e-4f);
  setenv("GOPT_CONV_1X1_F32", "0", 1);
  CpuOutcome off = runPlanConv(512, 256, 7);
  EXPECT_NE(off.impl, "gopt-1x1-f32");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_1X1_F32");
}

} // namespace
