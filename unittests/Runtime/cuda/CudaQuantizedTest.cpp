//===- CudaQuantizedTest.cpp - CUDA int8 chains vs. the reference ---------===//
//
// Needs a GPU: every test skips with "no CUDA device" without one. The
// plans are what --gopt-quantize writes (quantize -> dequantize around each
// conv2d/matmul, int8 constant weights behind a dequantize); the CUDA
// backend runs the chains as int8 kernels (QuantizedOps.cpp), the
// reference in f32 on the dequantized values. A requantized result may be
// one quantum off where the reference's f32 sum (rounded) and the exact
// integer sum fall on either side of a rounding boundary: rare, so at most
// 1% of the elements may differ, by at most one quantum.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"
#include "QuantizedOps.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

namespace gopt::runtime::testing {
namespace {

class CudaQuantized : public CudaDeviceTest {
protected:
  void SetUp() override {
    CudaDeviceTest::SetUp();
    unsetenv("GOPT_CUDA_INT8");
  }
};

Tensor randomInt8(const Shape &shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  Tensor t = Tensor::allocate(DType::kI8, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

// Per-channel weight scales around 1/127 (weights of magnitude about 1).
Tensor weightScales(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 1.5f);
  Tensor t = Tensor::allocate(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = dist(rng) / 127.f;
  return t;
}

Tensor scalar(float v) { return makeTensor<float>(DType::kF32, {1}, {v}); }

// Adds x -> quantize(s) -> dequantize(s) and returns the dequantized tensor.
int quantizeDequantize(PlanBuilder &b, int x, const std::string &name,
                       const Shape &shape, float s) {
  int scale = b.addConstant(name + "_s", scalar(s));
  int q = b.addIntermediate(name + "_q", DType::kI8, shape);
  b.addOp("quantize", name + "_quantize", {x, scale}, {q});
  int d = b.addIntermediate(name + "_dq", DType::kF32, shape);
  b.addOp("dequantize", name + "_dequantize", {q, scale}, {d});
  return d;
}

// A constant int8 weight behind a dequantize (per channel along `axis`
// with `channels` scales, or one scale when channels == 0).
int dequantizedWeight(PlanBuilder &b, const std::string &name,
                      const Shape &shape, int64_t axis, int64_t channels,
                      uint32_t seed) {
  int w = b.addConstant(name, randomInt8(shape, seed));
  int s = b.addConstant(name + "_scales", channels
                                              ? weightScales(channels, seed + 1)
                                              : scalar(1.f / 127.f));
  int d = b.addIntermediate(name + "_dq", DType::kF32, shape);
  b.addOp("dequantize", name + "_dequantize", {w, s}, {d},
          {{"axis", intAttr(axis)}});
  return d;
}

// The end of a chain: y = dequantize(quantize(t, sy)), or a copy of t
// (the chain's f32 result) when sy == 0.
void addOutput(PlanBuilder &b, int t, const Shape &shape, float sy) {
  if (sy == 0) {
    int y = b.addOutput("y", DType::kF32, shape);
    b.addOp("identity", "y_copy", {t}, {y});
    return;
  }
  int scale = b.addConstant("sy", scalar(sy));
  int q = b.addIntermediate("y_q", DType::kI8, shape);
  b.addOp("quantize", "y_quantize", {t, scale}, {q});
  int y = b.addOutput("y", DType::kF32, shape);
  b.addOp("dequantize", "y_dequantize", {q, scale}, {y});
}

// Whether a profile row's implementation is one of the int8 kernels
// ("cublaslt-int8", "cublaslt-int8 (im2col)", "cudnn-int8").
bool isInt8(const std::string &implementation) {
  return implementation.find("-int8") != std::string::npos;
}

std::string implementationOf(const RunResult &r, const std::string &op) {
  for (const OpProfile &p : r.profiles)
    if (p.name == op)
      return p.implementation;
  return "(no profile row '" + op + "')";
}

// Both backends on `x`; a requantized output (quantum sy) within one
// quantum with at most 1% of the elements off, an f32 output within the
// difference of an f32 and an exact sum of `terms` products of magnitude
// up to `termScale`.
void checkChain(const RunResult &ref, const RunResult &got, float sy,
                int64_t terms, float termScale, const std::string &what) {
  ASSERT_EQ(ref.outputs.size(), 1u) << what;
  ASSERT_EQ(got.outputs.size(), 1u) << what;
  const Tensor &r = ref.outputs[0], &g = got.outputs[0];
  ASSERT_EQ(r.shape(), g.shape()) << what;
  double atol = sy ? sy * 1.001 : 4e-7 * terms * termScale;
  int64_t differ = 0;
  for (int64_t i = 0; i < r.numElements(); ++i) {
    float a = g.data<float>()[i], e = r.data<float>()[i];
    ASSERT_LE(std::fabs(a - e), atol + (sy ? 0 : 1e-5 * std::fabs(e)))
        << what << ": element " << i << ": cuda " << a << ", reference " << e;
    differ += a != e;
  }
  if (sy)
    EXPECT_LE(differ, r.numElements() / 100)
        << what << ": " << differ << " elements differ";
}

// Returns the CUDA run (its profile says which kernels ran).
RunResult expectChainMatches(const Plan &plan, const Tensor &x, float sy,
                             int64_t terms, float termScale,
                             const std::string &what) {
  RunResult ref = runPlan(plan, "reference", {x}, x.dim(0));
  RunResult got = runPlan(plan, "cuda", {x}, x.dim(0));
  checkChain(ref, got, sy, terms, termScale, what);
  return got;
}

struct ConvCase {
  bool nchw = false;
  bool oihw = false;
  int64_t n = 2, c = 8, h = 9, w = 9, k = 16, kh = 3, kw = 3;
  std::vector<int64_t> strides = {1, 1}, pads = {1, 1, 1, 1},
                       dilations = {1, 1};
  std::string padding = "EXPLICIT"; // "SAME": asymmetric TF padding
  bool perChannel = true;
  bool bias = true;
  std::string activation; // the conv's attribute
  std::string tailOp;     // "relu", "relu6", "clip" or "" after the conv
  int64_t groups = 1;
  float sy = 0.05f; // 0: f32 output
};

std::string describe(const ConvCase &c) {
  return detail::concat(c.nchw ? "NCHW" : "NHWC", c.oihw ? "/OIHW" : "/HWIO",
                        " x ", c.n, ",", c.c, ",", c.h, ",", c.w, " k ", c.k,
                        " ", c.kh, "x", c.kw, " s", c.strides[0], c.strides[1],
                        " pads ", c.pads[0], c.pads[1], c.pads[2], c.pads[3],
                        " ", c.padding, " d", c.dilations[0], " g", c.groups,
                        " act '", c.activation, "' tail '", c.tailOp,
                        "' perChannel ", c.perChannel, " sy ", c.sy);
}

// Builds and runs the chain; returns the conv's implementation on CUDA.
std::string runConvCase(const ConvCase &c, uint32_t seed) {
  const float sx = 1.f / 127.f; // the inputs are in [-1, 1]
  PlanBuilder b("int8-conv");
  Shape xs = c.nchw ? Shape{-1, c.c, c.h, c.w} : Shape{-1, c.h, c.w, c.c};
  int x = b.addInput("x", DType::kF32, xs);
  int dx = quantizeDequantize(b, x, "x", xs, sx);
  int64_t cg = c.c / c.groups;
  Shape ws = c.oihw ? Shape{c.k, cg, c.kh, c.kw} : Shape{c.kh, c.kw, cg, c.k};
  int dw = dequantizedWeight(b, "w", ws, c.oihw ? 0 : 3, c.perChannel ? c.k : 0,
                             seed);
  std::vector<int> ins = {dx, dw};
  if (c.bias)
    ins.push_back(b.addConstant("bias", randomF32({c.k}, seed + 2)));
  AttrMap attrs = {{"data_format", stringAttr(c.nchw ? "NCHW" : "NHWC")},
                   {"filter_format", stringAttr(c.oihw ? "OIHW" : "HWIO")},
                   {"strides", intsAttr(c.strides)},
                   {"dilations", intsAttr(c.dilations)},
                   {"pads", intsAttr(c.pads)},
                   {"groups", intAttr(c.groups)}};
  attrs["padding"] = stringAttr(c.padding);
  if (!c.activation.empty())
    attrs["activation"] = stringAttr(c.activation);
  // The output size, from the window arithmetic the runtime uses.
  auto oh = computeWindowDim(c.h, c.kh, c.strides[0], c.dilations[0], c.padding,
                             c.pads[0], c.pads[1], false);
  auto ow = computeWindowDim(c.w, c.kw, c.strides[1], c.dilations[1], c.padding,
                             c.pads[2], c.pads[3], false);
  EXPECT_TRUE(oh.ok() && ow.ok());
  if (!oh.ok() || !ow.ok())
    return "";
  Shape ys = c.nchw ? Shape{-1, c.k, oh->outSize, ow->outSize}
                    : Shape{-1, oh->outSize, ow->outSize, c.k};
  int conv = b.addIntermediate("conv_out", DType::kF32, ys);
  b.addOp("conv2d", "conv", ins, {conv}, attrs);
  int last = conv;
  if (!c.tailOp.empty()) {
    last = b.addIntermediate("act_out", DType::kF32, ys);
    AttrMap actAttrs;
    if (c.tailOp == "clip")
      actAttrs = {{"min", floatAttr(-0.5)}, {"max", floatAttr(2.0)}};
    b.addOp(c.tailOp, "act", {conv}, {last}, actAttrs);
  }
  addOutput(b, last, ys, c.sy);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  if (!plan.ok())
    return "";
  Shape concrete = xs;
  concrete[0] = c.n;
  Tensor input = randomF32(concrete, seed + 3);
  RunResult got = expectChainMatches(*plan, input, c.sy, cg * c.kh * c.kw, 1.5f,
                                     describe(c));
  return implementationOf(got, "conv");
}

TEST_F(CudaQuantized, ConvShapesStridesPadsLayouts) {
  std::vector<ConvCase> cases;
  ConvCase base;
  cases.push_back(base); // NHWC, C = 8: no gather
  ConvCase nchw = base;
  nchw.nchw = true;
  nchw.oihw = true;
  cases.push_back(nchw);
  ConvCase odd = base; // C and K not multiples of 4: padded channels
  odd.c = 3;
  odd.k = 10;
  odd.kh = odd.kw = 7;
  odd.h = odd.w = 20;
  odd.strides = {2, 2};
  odd.pads = {3, 3, 3, 3};
  odd.nchw = odd.oihw = true;
  cases.push_back(odd);
  ConvCase same = base; // asymmetric SAME padding, stride 2
  same.padding = "SAME";
  same.pads = {0, 0, 0, 0};
  same.h = 10;
  same.w = 11;
  same.strides = {2, 2};
  cases.push_back(same);
  ConvCase pointwise = base; // 1x1, no padding, no bias, one weight scale
  pointwise.kh = pointwise.kw = 1;
  pointwise.pads = {0, 0, 0, 0};
  pointwise.bias = false;
  pointwise.perChannel = false;
  pointwise.c = 32;
  pointwise.k = 64;
  cases.push_back(pointwise);
  ConvCase wide = base; // more channels, a larger batch
  wide.n = 4;
  wide.c = 64;
  wide.k = 128;
  wide.h = wide.w = 14;
  cases.push_back(wide);
  uint32_t seed = 1000;
  for (const ConvCase &c : cases) {
    std::string impl = runConvCase(c, seed += 10);
    EXPECT_TRUE(isInt8(impl)) << describe(c);
  }
  // Dilation: int8 where this cuDNN takes it, else op by op (the trial run
  // at set-up decides); either way the result matches.
  ConvCase dilated = base;
  dilated.dilations = {2, 2};
  dilated.pads = {2, 2, 2, 2};
  dilated.nchw = dilated.oihw = true;
  runConvCase(dilated, seed += 10);
}

TEST_F(CudaQuantized, ConvActivationsAndFloatOutput) {
  uint32_t seed = 2000;
  for (const char *act : {"relu", "relu6"}) {
    ConvCase c;
    c.activation = act;
    EXPECT_TRUE(isInt8(runConvCase(c, seed += 10))) << act;
  }
  for (const char *tail : {"relu", "relu6", "clip"}) {
    ConvCase c;
    c.tailOp = tail;
    c.nchw = c.oihw = true;
    EXPECT_TRUE(isInt8(runConvCase(c, seed += 10))) << tail;
  }
  // No quantize after the conv: the epilogue writes f32.
  ConvCase f32;
  f32.sy = 0;
  f32.activation = "relu";
  EXPECT_TRUE(isInt8(runConvCase(f32, seed += 10)));
  ConvCase f32Nchw = f32;
  f32Nchw.nchw = f32Nchw.oihw = true;
  f32Nchw.activation = "";
  EXPECT_TRUE(isInt8(runConvCase(f32Nchw, seed += 10)));
}

// ResNet's block end after a conv: quantize(s_a) -> dequantize -> add of
// a dequantized int8 residual (either operand order) [-> relu]
// [-> quantize(s_y)], all in the conv's epilogue. The one rounding that can
// differ is the requantize at s_a, so results are within one s_a step
// (s_y >= s_a here: one output quantum).
TEST_F(CudaQuantized, ConvResidualBlockEnd) {
  struct Case {
    bool nchw, residualFirst, relu;
    float sy; // 0: f32 result
  };
  const float sa = 0.04f, sr = 0.03f;
  uint32_t seed = 7000;
  for (Case k :
       {Case{true, false, true, 0.05f}, Case{false, true, true, 0.05f},
        Case{true, true, false, 0.f}, Case{false, false, false, 0.06f}}) {
    PlanBuilder b("int8-residual");
    Shape xs = k.nchw ? Shape{-1, 8, 6, 6} : Shape{-1, 6, 6, 8};
    Shape ys = k.nchw ? Shape{-1, 12, 6, 6} : Shape{-1, 6, 6, 12};
    int x = b.addInput("x", DType::kF32, xs);
    int r = b.addInput("r", DType::kF32, ys);
    int dr = quantizeDequantize(b, r, "r", ys, sr);
    int dx = quantizeDequantize(b, x, "x", xs, 1.f / 127.f);
    Shape ws = k.nchw ? Shape{12, 8, 3, 3} : Shape{3, 3, 8, 12};
    int dw = dequantizedWeight(b, "w", ws, k.nchw ? 0 : 3, 12, seed += 10);
    int bias = b.addConstant("bias", randomF32({12}, seed + 5));
    int conv = b.addIntermediate("conv_out", DType::kF32, ys);
    b.addOp("conv2d", "conv", {dx, dw, bias}, {conv},
            {{"data_format", stringAttr(k.nchw ? "NCHW" : "NHWC")},
             {"filter_format", stringAttr(k.nchw ? "OIHW" : "HWIO")},
             {"pads", intsAttr({1, 1, 1, 1})}});
    int da = quantizeDequantize(b, conv, "a", ys, sa);
    int sum = b.addIntermediate("sum", DType::kF32, ys);
    b.addOp("add", "add",
            k.residualFirst ? std::vector<int>{dr, da}
                            : std::vector<int>{da, dr},
            {sum});
    int last = sum;
    if (k.relu) {
      last = b.addIntermediate("relu_out", DType::kF32, ys);
      b.addOp("relu", "relu", {sum}, {last});
    }
    addOutput(b, last, ys, k.sy);
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    Shape xc = xs, yc = ys;
    xc[0] = yc[0] = 3;
    Tensor xin = randomF32(xc, seed + 6), rin = randomF32(yc, seed + 7);
    RunResult ref = runPlan(*plan, "reference", {xin, rin}, 3);
    RunResult got = runPlan(*plan, "cuda", {xin, rin}, 3);
    std::string what =
        detail::concat("nchw ", k.nchw, " residualFirst ", k.residualFirst,
                       " relu ", k.relu, " sy ", k.sy);
    ASSERT_EQ(ref.outputs.size(), 1u) << what;
    ASSERT_EQ(got.outputs.size(), 1u) << what;
    float step = k.sy ? k.sy : sa;
    EXPECT_LE(maxAbsDiff(got.outputs[0], ref.outputs[0]), step * 1.001f)
        << what;
    int64_t differ = 0;
    for (int64_t i = 0; i < ref.outputs[0].numElements(); ++i)
      differ +=
          got.outputs[0].data<float>()[i] != ref.outputs[0].data<float>()[i];
    // After the requantize at s_a every step rounds as the reference's
    // does, so even f32 results are equal wherever that requantize is.
    EXPECT_LE(differ, ref.outputs[0].numElements() / 100) << what;
    EXPECT_TRUE(isInt8(implementationOf(got, "conv"))) << what;
    EXPECT_EQ(implementationOf(got, "add"), "fused into 'conv'") << what;
    EXPECT_EQ(implementationOf(got, "a_dequantize"), "fused into 'conv'")
        << what;
  }
}

// dequantize -> max_pool -> quantize with one scale pools the int8 values:
// equal to the reference bit for bit. With another quantize scale the pool
// runs in f32 (op by op) and still matches.
TEST_F(CudaQuantized, MaxPoolOnInt8Values) {
  struct Case {
    bool nchw;
    std::vector<int64_t> kernel, strides, pads;
    std::string padding;
    bool ceilMode;
    float outScale; // 0: the input's scale
  };
  const float s = 0.02f;
  uint32_t seed = 9000;
  for (const Case &k :
       {Case{true, {3, 3}, {2, 2}, {1, 1, 1, 1}, "EXPLICIT", false, 0},
        Case{false, {2, 2}, {2, 2}, {0, 0, 0, 0}, "EXPLICIT", false, 0},
        Case{true, {3, 3}, {2, 2}, {0, 0, 0, 0}, "EXPLICIT", true, 0},
        Case{false, {3, 3}, {2, 2}, {0, 0, 0, 0}, "SAME", false, 0},
        Case{true, {3, 3}, {2, 2}, {1, 1, 1, 1}, "EXPLICIT", false, 0.03f}}) {
    Shape xs = k.nchw ? Shape{-1, 5, 11, 10} : Shape{-1, 11, 10, 5};
    auto oh = computeWindowDim(11, k.kernel[0], k.strides[0], 1, k.padding,
                               k.pads[0], k.pads[1], k.ceilMode);
    auto ow = computeWindowDim(10, k.kernel[1], k.strides[1], 1, k.padding,
                               k.pads[2], k.pads[3], k.ceilMode);
    ASSERT_TRUE(oh.ok() && ow.ok());
    Shape ys = k.nchw ? Shape{-1, 5, oh->outSize, ow->outSize}
                      : Shape{-1, oh->outSize, ow->outSize, 5};
    PlanBuilder b("int8-pool");
    int x = b.addInput("x", DType::kF32, xs);
    int dx = quantizeDequantize(b, x, "x", xs, s);
    int pooled = b.addIntermediate("pooled", DType::kF32, ys);
    b.addOp("max_pool", "pool", {dx}, {pooled},
            {{"data_format", stringAttr(k.nchw ? "NCHW" : "NHWC")},
             {"kernel", intsAttr(k.kernel)},
             {"strides", intsAttr(k.strides)},
             {"pads", intsAttr(k.pads)},
             {"padding", stringAttr(k.padding)},
             {"ceil_mode", boolAttr(k.ceilMode)}});
    addOutput(b, pooled, ys, k.outScale ? k.outScale : s);
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    Shape concrete = xs;
    concrete[0] = 3;
    // Values beyond the int8 range too: saturated, then pooled.
    Tensor input = randomF32(concrete, seed += 10);
    for (int64_t i = 0; i < input.numElements(); i += 7)
      input.data<float>()[i] *= 4;
    RunResult ref = runPlan(*plan, "reference", {input}, 3);
    RunResult got = runPlan(*plan, "cuda", {input}, 3);
    std::string what = detail::concat("nchw ", k.nchw, " ", k.padding, " ceil ",
                                      k.ceilMode, " out scale ", k.outScale);
    ASSERT_EQ(ref.outputs.size(), 1u) << what;
    ASSERT_EQ(got.outputs.size(), 1u) << what;
    EXPECT_EQ(maxAbsDiff(got.outputs[0], ref.outputs[0]), 0.f) << what;
    EXPECT_EQ(isInt8(implementationOf(got, "pool")), k.outScale == 0) << what;
  }
}

// Grouped and depthwise convolutions have no int8 path yet: they run op by
// op (f32 cuDNN on the dequantized values) and still match.
TEST_F(CudaQuantized, GroupedConvFallsBackAndMatches) {
  ConvCase depthwise;
  depthwise.groups = depthwise.c = depthwise.k = 8;
  EXPECT_FALSE(isInt8(runConvCase(depthwise, 3000)));
  ConvCase grouped;
  grouped.groups = 2;
  grouped.nchw = grouped.oihw = true;
  EXPECT_FALSE(isInt8(runConvCase(grouped, 3010)));
}

struct MatmulCase {
  Shape a = {-1, 64};
  int64_t batch = 4, n = 32;
  bool transposeB = false, perChannel = true;
  std::string tailOp;
  float sy = 0.05f;
};

std::string runMatmulCase(const MatmulCase &c, uint32_t seed) {
  const float sx = 1.f / 127.f;
  int64_t k = c.a.back();
  PlanBuilder b("int8-matmul");
  int x = b.addInput("x", DType::kF32, c.a);
  int dx = quantizeDequantize(b, x, "x", c.a, sx);
  Shape bs = c.transposeB ? Shape{c.n, k} : Shape{k, c.n};
  int dw = dequantizedWeight(b, "w", bs, c.transposeB ? 0 : 1,
                             c.perChannel ? c.n : 0, seed);
  Shape ys = c.a;
  ys.back() = c.n;
  int mm = b.addIntermediate("mm_out", DType::kF32, ys);
  b.addOp("matmul", "matmul", {dx, dw}, {mm},
          {{"transpose_b", boolAttr(c.transposeB)}});
  int last = mm;
  if (!c.tailOp.empty()) {
    last = b.addIntermediate("act_out", DType::kF32, ys);
    b.addOp(c.tailOp, "act", {mm}, {last});
  }
  addOutput(b, last, ys, c.sy);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  if (!plan.ok())
    return "";
  Shape concrete = c.a;
  concrete[0] = c.batch;
  Tensor input = randomF32(concrete, seed + 3);
  std::string what =
      detail::concat("matmul a ", shapeToString(concrete), " n ", c.n, " tb ",
                     c.transposeB, " tail '", c.tailOp, "' sy ", c.sy);
  RunResult got = expectChainMatches(*plan, input, c.sy, k, 1.5f, what);
  return implementationOf(got, "matmul");
}

TEST_F(CudaQuantized, MatmulMatchesReference) {
  uint32_t seed = 4000;
  MatmulCase plain;
  EXPECT_TRUE(isInt8(runMatmulCase(plain, seed += 10)));
  MatmulCase tb; // the classifier form --gopt-quantize writes
  tb.transposeB = true;
  tb.a = {-1, 512};
  tb.n = 1000;
  tb.batch = 8;
  EXPECT_TRUE(isInt8(runMatmulCase(tb, seed += 10)));
  MatmulCase odd; // N not a multiple of 4, one weight scale, relu
  odd.n = 10;
  odd.perChannel = false;
  odd.tailOp = "relu";
  EXPECT_TRUE(isInt8(runMatmulCase(odd, seed += 10)));
  MatmulCase rank3; // leading dims flatten into M
  rank3.a = {-1, 5, 32};
  rank3.batch = 3;
  EXPECT_TRUE(isInt8(runMatmulCase(rank3, seed += 10)));
  MatmulCase f32; // f32 output
  f32.sy = 0;
  f32.transposeB = true;
  EXPECT_TRUE(isInt8(runMatmulCase(f32, seed += 10)));
  // K not a multiple of 4: cuBLASLt's int8 layouts cannot take it; op by op.
  MatmulCase oddK;
  oddK.a = {-1, 30};
  EXPECT_FALSE(isInt8(runMatmulCase(oddK, seed += 10)));
}

// ResNet's basic block and classifier as --gopt-quantize writes them: conv
// (relu) -> Q/DQ -> conv -> Q/DQ -> add(residual) -> relu -> Q/DQ ->
// global_avg_pool -> Q/DQ -> matmul -> Q/DQ.
StatusOr<Plan> quantizedBlockPlan() {
  PlanBuilder b("int8-block");
  const int64_t c = 16;
  Shape act = {-1, c, 8, 8};
  int x = b.addInput("x", DType::kF32, act);
  int dx = quantizeDequantize(b, x, "x", act, 1.f / 127.f);
  AttrMap convAttrs = {{"data_format", stringAttr("NCHW")},
                       {"filter_format", stringAttr("OIHW")},
                       {"pads", intsAttr({1, 1, 1, 1})}};
  AttrMap reluConv = convAttrs;
  reluConv["activation"] = stringAttr("relu");
  int w1 = dequantizedWeight(b, "w1", {c, c, 3, 3}, 0, c, 5000);
  int b1 = b.addConstant("b1", randomF32({c}, 5002));
  int c1 = b.addIntermediate("c1", DType::kF32, act);
  b.addOp("conv2d", "conv1", {dx, w1, b1}, {c1}, reluConv);
  int d1 = quantizeDequantize(b, c1, "c1", act, 0.08f);
  int w2 = dequantizedWeight(b, "w2", {c, c, 3, 3}, 0, c, 5010);
  int b2 = b.addConstant("b2", randomF32({c}, 5012));
  int c2 = b.addIntermediate("c2", DType::kF32, act);
  b.addOp("conv2d", "conv2", {d1, w2, b2}, {c2}, convAttrs);
  int d2 = quantizeDequantize(b, c2, "c2", act, 0.1f);
  int sum = b.addIntermediate("sum", DType::kF32, act);
  b.addOp("add", "residual", {d2, dx}, {sum});
  int relu = b.addIntermediate("relu", DType::kF32, act);
  b.addOp("relu", "block_relu", {sum}, {relu});
  int d3 = quantizeDequantize(b, relu, "block", act, 0.1f);
  Shape pooled = {-1, c, 1, 1};
  int pool = b.addIntermediate("pool", DType::kF32, pooled);
  b.addOp("global_avg_pool", "gap", {d3}, {pool},
          {{"data_format", stringAttr("NCHW")}});
  Shape flat = {-1, c};
  int fl = b.addIntermediate("flat", DType::kF32, flat);
  b.addOp("flatten", "flatten", {pool}, {fl});
  int d4 = quantizeDequantize(b, fl, "flat", flat, 0.02f);
  int w3 = dequantizedWeight(b, "w3", {12, c}, 0, 12, 5020);
  Shape logits = {-1, 12};
  int mm = b.addIntermediate("mm", DType::kF32, logits);
  b.addOp("matmul", "fc", {d4, w3}, {mm}, {{"transpose_b", boolAttr(true)}});
  addOutput(b, mm, logits, 0.02f);
  return b.build();
}

// The plan of quantizedBlockPlan on CUDA: eager, captured and replayed, at
// two batch sizes, and the same plan with GOPT_CUDA_INT8=0 (op by op).
TEST_F(CudaQuantized, WholeQuantizedPlanMatchesReference) {
  const int64_t c = 16;
  auto plan = quantizedBlockPlan();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  for (int64_t batch : {2, 5}) {
    Tensor input = randomF32({batch, c, 8, 8}, 5030 + batch);
    RunResult ref = runPlan(*plan, "reference", {input}, batch);
    ASSERT_EQ(ref.outputs.size(), 1u);
    SessionOptions options;
    options.backend = "cuda";
    options.batchSize = batch;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    ASSERT_TRUE((*session)->setInput("x", input).ok());
    for (int step = 0; step < 3; ++step) { // eager, captured, replayed
      ASSERT_TRUE((*session)->run().ok());
      auto y = (*session)->output("y");
      ASSERT_TRUE(y.ok());
      // Several requantizations in a row: an element one quantum off early
      // can move a later value by a few quanta, so the bound is looser
      // than a single chain's (a few of the 0.02 output quanta).
      EXPECT_LE(maxAbsDiff(y->clone(), ref.outputs[0]), 0.1f)
          << "batch " << batch << " step " << step;
    }
    std::map<std::string, std::string> impl;
    for (const OpProfile &p : (*session)->opProfiles())
      impl[p.name] = p.implementation;
    EXPECT_TRUE(isInt8(impl["conv1"]));
    EXPECT_TRUE(isInt8(impl["conv2"]));
    EXPECT_TRUE(isInt8(impl["fc"]));
    EXPECT_EQ(impl["c1_quantize"], "fused into 'conv1'");
    EXPECT_EQ(impl["w1_dequantize"], "fused into 'conv1'");
    // The block end (dequantize, residual add, relu, quantize) is conv2's
    // epilogue, and the block input's dequantize, read only by conv1 and
    // the residual add, does not run.
    for (const char *op : {"c2_quantize", "c2_dequantize", "residual",
                           "block_relu", "block_quantize"})
      EXPECT_EQ(impl[op], "fused into 'conv2'") << op;
    EXPECT_EQ(impl["x_dequantize"], "fused into 'conv1'");
  }
  setenv("GOPT_CUDA_INT8", "0", 1);
  Tensor input = randomF32({3, c, 8, 8}, 5040);
  RunResult ref = runPlan(*plan, "reference", {input}, 3);
  RunResult opByOp = runPlan(*plan, "cuda", {input}, 3);
  unsetenv("GOPT_CUDA_INT8");
  ASSERT_EQ(opByOp.outputs.size(), 1u);
  EXPECT_LE(maxAbsDiff(opByOp.outputs[0], ref.outputs[0]), 0.1f);
  EXPECT_FALSE(isInt8(implementationOf(opByOp, "conv1")));
}

// Weight-only int8 (--gopt-quantize-weights): the dequantize of constant
// weights runs once when the session is set up, not in every step, and
// the f32 conv and matmul read its result as a constant.
TEST_F(CudaQuantized, WeightOnlyDequantizeRunsOnceAtSetUp) {
  PlanBuilder b("weight-only");
  Shape xs = {-1, 8, 8, 8};
  int x = b.addInput("x", DType::kF32, xs);
  int w = dequantizedWeight(b, "w", {3, 3, 8, 16}, 3, 16, 6000);
  int bias = b.addConstant("bias", randomF32({16}, 6002));
  Shape cs = {-1, 8, 8, 16};
  int conv = b.addIntermediate("conv", DType::kF32, cs);
  b.addOp(
      "conv2d", "conv", {x, w, bias}, {conv},
      {{"pads", intsAttr({1, 1, 1, 1})}, {"activation", stringAttr("relu")}});
  Shape flat = {-1, 8 * 8 * 16};
  int fl = b.addIntermediate("flat", DType::kF32, flat);
  b.addOp("flatten", "flatten", {conv}, {fl});
  int w2 = dequantizedWeight(b, "w2", {8 * 8 * 16, 10}, 1, 10, 6010);
  int y = b.addOutput("y", DType::kF32, {-1, 10});
  b.addOp("matmul", "fc", {fl, w2}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor input = randomF32({3, 8, 8, 8}, 6020);
  RunResult ref = runPlan(*plan, "reference", {input}, 3);
  RunResult got = runPlan(*plan, "cuda", {input}, 3);
  ASSERT_EQ(got.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  float scale = 0;
  for (int64_t i = 0; i < ref.outputs[0].numElements(); ++i)
    scale = std::max(scale, std::fabs(ref.outputs[0].data<float>()[i]));
  EXPECT_LE(maxAbsDiff(got.outputs[0], ref.outputs[0]), 1e-4f * scale + 1e-4f);
  for (const char *op : {"w_dequantize", "w2_dequantize"}) {
    std::string impl = implementationOf(got, op);
    EXPECT_NE(impl.find("once, at set-up"), std::string::npos) << op << impl;
  }
}

} // namespace
} // namespace gopt::runtime::testing

namespace gopt::runtime::testing {
namespace {

// Chain recognition without a device (planInt8Chains with no context):
// runs everywhere.
struct Planned {
  Plan plan;
  std::map<int, cuda::Int8Chain> chains;
  int op(const std::string &name) const {
    for (int o = 0; o < plan.proto().ops_size(); ++o)
      if (plan.proto().ops(o).name() == name)
        return o;
    ADD_FAILURE() << "no op " << name;
    return -1;
  }
  int tensor(const std::string &name) const {
    for (int t = 0; t < plan.proto().tensors_size(); ++t)
      if (plan.proto().tensors(t).name() == name)
        return t;
    ADD_FAILURE() << "no tensor " << name;
    return -1;
  }
  // The ops chain `anchor` absorbs, by name, sorted.
  std::vector<std::string> absorbed(const std::string &anchor) const {
    std::vector<std::string> names;
    auto it = chains.find(op(anchor));
    if (it == chains.end())
      return {"(no chain)"};
    for (int o : it->second.absorbed)
      names.push_back(plan.proto().ops(o).name());
    std::sort(names.begin(), names.end());
    return names;
  }
};

Planned planChains(Plan plan, int64_t batch) {
  Planned p{std::move(plan), {}};
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  for (const plan::TensorInfo &t : p.plan.proto().tensors()) {
    dtypes.push_back(fromProtoDType(t.dtype()));
    Shape s(t.shape().begin(), t.shape().end());
    for (int64_t &d : s)
      d = d < 0 ? batch : d;
    shapes.push_back(s);
  }
  p.chains = cuda::planInt8Chains(p.plan.proto(), dtypes, shapes, nullptr);
  return p;
}

TEST(CudaQuantizedPlanning, ResNetBlockChains) {
  unsetenv("GOPT_CUDA_INT8");
  auto plan = quantizedBlockPlan();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Planned p = planChains(std::move(*plan), 2);
  ASSERT_EQ(p.chains.size(), 3u);
  // conv1 reads the block input's int8 values; their dequantize, which
  // only conv1 and the residual add (in conv2's chain) read, is dropped.
  EXPECT_EQ(p.absorbed("conv1"),
            (std::vector<std::string>{"c1_quantize", "w1_dequantize",
                                      "x_dequantize"}));
  EXPECT_EQ(p.chains.at(p.op("conv1")).input, p.tensor("x_q"));
  EXPECT_EQ(p.chains.at(p.op("conv1")).result, p.tensor("c1_q"));
  EXPECT_EQ(p.chains.at(p.op("conv1")).residual, -1);
  EXPECT_EQ(p.absorbed("conv2"),
            (std::vector<std::string>{
                "block_quantize", "block_relu", "c1_dequantize",
                "c2_dequantize", "c2_quantize", "residual", "w2_dequantize"}));
  EXPECT_EQ(p.chains.at(p.op("conv2")).input, p.tensor("c1_q"));
  EXPECT_EQ(p.chains.at(p.op("conv2")).residual, p.tensor("x_q"));
  EXPECT_EQ(p.chains.at(p.op("conv2")).result, p.tensor("block_q"));
  // The pooled value's dequantize runs (global_avg_pool reads it); the
  // classifier's output dequantize is the graph's output.
  EXPECT_EQ(p.absorbed("fc"),
            (std::vector<std::string>{"flat_dequantize", "w3_dequantize",
                                      "y_quantize"}));
  EXPECT_EQ(p.chains.at(p.op("fc")).result, p.tensor("y_q"));

  setenv("GOPT_CUDA_INT8", "0", 1);
  auto again = quantizedBlockPlan();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(planChains(std::move(*again), 2).chains.empty());
  unsetenv("GOPT_CUDA_INT8");
}

// ResNet's stem: conv (relu) -> Q/DQ -> max_pool -> Q/DQ (same scale) ->
// conv: the pool reads and writes int8, and no dequantize runs.
TEST(CudaQuantizedPlanning, StemPoolStaysInt8) {
  unsetenv("GOPT_CUDA_INT8");
  PlanBuilder b("stem");
  Shape xs = {-1, 3, 16, 16}, cs = {-1, 8, 8, 8}, ps = {-1, 8, 4, 4};
  int x = b.addInput("x", DType::kF32, xs);
  int dx = quantizeDequantize(b, x, "x", xs, 0.01f);
  int dw = dequantizedWeight(b, "w1", {8, 3, 3, 3}, 0, 8, 8100);
  int c1 = b.addIntermediate("c1", DType::kF32, cs);
  b.addOp("conv2d", "conv1", {dx, dw}, {c1},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"strides", intsAttr({2, 2})},
           {"pads", intsAttr({1, 1, 1, 1})},
           {"activation", stringAttr("relu")}});
  int d1 = quantizeDequantize(b, c1, "c1", cs, 0.05f);
  int pooled = b.addIntermediate("pooled", DType::kF32, ps);
  b.addOp("max_pool", "pool", {d1}, {pooled},
          {{"data_format", stringAttr("NCHW")},
           {"kernel", intsAttr({3, 3})},
           {"strides", intsAttr({2, 2})},
           {"pads", intsAttr({1, 1, 1, 1})}});
  int dp = quantizeDequantize(b, pooled, "pool", ps, 0.05f);
  int dw2 = dequantizedWeight(b, "w2", {8, 8, 1, 1}, 0, 8, 8110);
  int y = b.addOutput("y", DType::kF32, ps);
  b.addOp("conv2d", "conv2", {dp, dw2}, {y},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Planned p = planChains(std::move(*plan), 2);
  ASSERT_EQ(p.chains.size(), 3u);
  EXPECT_EQ(p.absorbed("pool"),
            (std::vector<std::string>{"c1_dequantize", "pool_quantize"}));
  EXPECT_EQ(p.chains.at(p.op("pool")).input, p.tensor("c1_q"));
  EXPECT_EQ(p.chains.at(p.op("pool")).result, p.tensor("pool_q"));
  EXPECT_EQ(p.absorbed("conv2"),
            (std::vector<std::string>{"pool_dequantize", "w2_dequantize"}));
}

// What must stay op by op: a residual whose int8 values are computed after
// the conv (the fused kernel would read them too early), a grouped conv,
// per-channel activation scales, a matmul with K % 4 != 0 or transpose_a.
TEST(CudaQuantizedPlanning, ChainsStopWhereTheKernelCannotFollow) {
  unsetenv("GOPT_CUDA_INT8");
  Shape xs = {-1, 8, 6, 6}, ys = {-1, 12, 6, 6};
  AttrMap nchw = {{"data_format", stringAttr("NCHW")},
                  {"filter_format", stringAttr("OIHW")},
                  {"pads", intsAttr({1, 1, 1, 1})}};
  {
    PlanBuilder b("late-residual");
    int x = b.addInput("x", DType::kF32, xs);
    int r = b.addInput("r", DType::kF32, ys);
    int dx = quantizeDequantize(b, x, "x", xs, 0.01f);
    int dw = dequantizedWeight(b, "w", {12, 8, 3, 3}, 0, 12, 8000);
    int conv = b.addIntermediate("conv_out", DType::kF32, ys);
    b.addOp("conv2d", "conv", {dx, dw}, {conv}, nchw);
    int da = quantizeDequantize(b, conv, "a", ys, 0.04f);
    int dr = quantizeDequantize(b, r, "r", ys, 0.03f); // after the conv
    int y = b.addOutput("y", DType::kF32, ys);
    b.addOp("add", "add", {da, dr}, {y});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    Planned p = planChains(std::move(*plan), 2);
    EXPECT_EQ(p.absorbed("conv"),
              (std::vector<std::string>{"a_quantize", "w_dequantize",
                                        "x_dequantize"}));
    EXPECT_EQ(p.chains.at(p.op("conv")).residual, -1);
  }
  {
    PlanBuilder b("grouped-and-per-channel");
    int x = b.addInput("x", DType::kF32, xs);
    int dx = quantizeDequantize(b, x, "x", xs, 0.01f);
    int dw = dequantizedWeight(b, "w", {12, 4, 3, 3}, 0, 12, 8010);
    AttrMap grouped = nchw;
    grouped["groups"] = intAttr(2);
    int conv = b.addIntermediate("conv_out", DType::kF32, ys);
    b.addOp("conv2d", "grouped", {dx, dw}, {conv}, grouped);
    // Per-channel activation scales along the channel axis.
    int qs = b.addConstant("qs", weightScales(12, 8020));
    int q = b.addIntermediate("q", DType::kI8, ys);
    b.addOp("quantize", "q_per_channel", {conv, qs}, {q},
            {{"axis", intAttr(1)}});
    int dq = b.addIntermediate("dq", DType::kF32, ys);
    b.addOp("dequantize", "dq_per_channel", {q, qs}, {dq},
            {{"axis", intAttr(1)}});
    int dw2 = dequantizedWeight(b, "w2", {12, 12, 3, 3}, 0, 12, 8030);
    int y = b.addOutput("y", DType::kF32, ys);
    b.addOp("conv2d", "per_channel_input", {dq, dw2}, {y}, nchw);
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    EXPECT_TRUE(planChains(std::move(*plan), 2).chains.empty());
  }
  for (bool transposeA : {false, true}) {
    int64_t k = transposeA ? 32 : 30;
    PlanBuilder b("matmul");
    Shape as = transposeA ? Shape{k, 4} : Shape{4, k};
    int a = b.addInput("a", DType::kF32, as);
    int da = quantizeDequantize(b, a, "a", as, 0.01f);
    int dw = dequantizedWeight(b, "w", {k, 8}, 1, 8, 8040);
    int y = b.addOutput("y", DType::kF32, {4, 8});
    b.addOp("matmul", "matmul", {da, dw}, {y},
            {{"transpose_a", boolAttr(transposeA)}});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    EXPECT_TRUE(planChains(std::move(*plan), 4).chains.empty())
        << "transpose_a " << transposeA;
  }
}

} // namespace
} // namespace gopt::runtime::testing
