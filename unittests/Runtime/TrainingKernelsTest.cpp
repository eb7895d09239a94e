//===- TrainingKernelsTest.cpp - Gradient and optimizer kernels -----------===//
//
// The reference gradient kernels against central finite differences of the
// forward reference kernels, the fast/oneDNN kernels against the reference,
// the optimizer updates against PyTorch's formulas, and the errors.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gopt/runtime/CpuInfo.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

gopt::plan::Op makeOp(const std::string &kind, const AttrMap &attrs) {
  gopt::plan::Op op;
  op.set_kind(kind);
  op.set_name(kind);
  for (const auto &[name, value] : attrs)
    (*op.mutable_attrs())[name] = value;
  return op;
}

// Result shapes of `kind` on `inputs` by its schema's shape function.
StatusOr<std::vector<Shape>> inferShapes(const gopt::plan::Op &op,
                                         const std::vector<Tensor> &inputs,
                                         int numOutputs) {
  const OpSchema *schema = findOpSchema(op.kind());
  if (!schema)
    return notFound("no schema for ", op.kind());
  std::vector<Shape> inShapes, outShapes(numOutputs);
  std::vector<DType> inTypes;
  for (const Tensor &t : inputs) {
    inShapes.push_back(t.shape());
    inTypes.push_back(t.dtype());
  }
  GOPT_RETURN_IF_ERROR(
      schema->inferShapes(OpAttrs(op), inShapes, inTypes, outShapes));
  return outShapes;
}

// The op's fixed result count, or its least for a variadic one.
int defaultResults(const std::string &kind) {
  const OpSchema *schema = findOpSchema(kind);
  return schema->maxResults < 0 ? schema->minResults : schema->maxResults;
}

// One kernel created straight from the registry, run many times (the
// finite differences call the forward kernels thousands of times).
class DirectKernel {
public:
  DirectKernel(const std::string &kind, const AttrMap &attrs,
               const std::vector<Tensor> &inputs,
               const std::string &backend = "reference", int numOutputs = -1)
      : op_(makeOp(kind, attrs)) {
    if (numOutputs < 0)
      numOutputs = defaultResults(kind);
    auto shapes = inferShapes(op_, inputs, numOutputs);
    EXPECT_TRUE(shapes.ok()) << kind << ": " << shapes.status().toString();
    if (!shapes.ok())
      return;
    config_.op = &op_;
    for (const Tensor &t : inputs) {
      config_.inputTypes.push_back(t.dtype());
      config_.inputShapes.push_back(t.shape());
      config_.constantInputs.push_back(nullptr);
    }
    for (const Shape &s : *shapes) {
      config_.outputTypes.push_back(F32);
      config_.outputShapes.push_back(s);
      outputs_.push_back(Tensor::allocate(F32, s));
    }
    auto kernel = KernelRegistry::global().create(backend, config_);
    EXPECT_TRUE(kernel.ok()) << kernel.status().toString();
    if (kernel.ok())
      kernel_ = std::move(kernel).value();
  }

  // The results (owned by this object, overwritten by the next run).
  const std::vector<Tensor> &run(const std::vector<Tensor> &inputs) {
    Status s =
        kernel_ ? kernel_->run(inputs, outputs_) : internalError("no kernel");
    EXPECT_TRUE(s.ok()) << op_.kind() << ": " << s.toString();
    return outputs_;
  }
  std::string implementation() const {
    return kernel_ ? kernel_->implementation() : "";
  }

private:
  gopt::plan::Op op_;
  KernelConfig config_;
  std::unique_ptr<Kernel> kernel_;
  std::vector<Tensor> outputs_;
};

std::vector<Tensor> runRef(const std::string &kind, const AttrMap &attrs,
                           const std::vector<Tensor> &inputs,
                           int numOutputs = -1) {
  DirectKernel k(kind, attrs, inputs, "reference", numOutputs);
  std::vector<Tensor> out;
  for (const Tensor &t : k.run(inputs))
    out.push_back(t.clone());
  return out;
}

double dot(const Tensor &a, const Tensor &r) {
  double s = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    s += static_cast<double>(a.data<float>()[i]) * r.data<float>()[i];
  return s;
}

// Checks `analytic` = d/d(inputs[wrt]) of L = sum(r * forward(inputs)[0])
// by central differences with step `eps`, element by element.
void checkGradient(const std::string &forwardKind, const AttrMap &attrs,
                   std::vector<Tensor> inputs, int wrt, const Tensor &r,
                   const Tensor &analytic, double eps, double tol,
                   int forwardOutputs = -1) {
  for (Tensor &t : inputs)
    t = t.clone();
  DirectKernel forward(forwardKind, attrs, inputs, "reference", forwardOutputs);
  ASSERT_EQ(analytic.shape(), inputs[wrt].shape());
  float *p = inputs[wrt].data<float>();
  for (int64_t i = 0; i < inputs[wrt].numElements(); ++i) {
    float saved = p[i];
    p[i] = static_cast<float>(saved + eps);
    double plus = dot(forward.run(inputs)[0], r);
    p[i] = static_cast<float>(saved - eps);
    double minus = dot(forward.run(inputs)[0], r);
    p[i] = saved;
    double fd = (plus - minus) / (2 * eps);
    double got = analytic.data<float>()[i];
    EXPECT_NEAR(got, fd, tol * (1 + std::abs(fd)))
        << forwardKind << " input " << wrt << " element " << i;
  }
}

// max |a - e| <= rel * max |e| (with a floor for all-zero tensors).
void expectClose(const Tensor &actual, const Tensor &expected,
                 double rel = 1e-4, const std::string &what = "") {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  double maxRef = 0, maxErr = 0;
  int64_t worst = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double e = expected.data<float>()[i], a = actual.data<float>()[i];
    maxRef = std::max(maxRef, std::abs(e));
    if (!(std::abs(a - e) <= maxErr)) {
      maxErr = std::abs(a - e);
      worst = i;
    }
  }
  EXPECT_LE(maxErr, rel * std::max(maxRef, 1e-3))
      << what << ": element " << worst << " is " << actual.data<float>()[worst]
      << ", expected " << expected.data<float>()[worst];
}

// Runs a one-op plan on `backend` (2 threads) and returns its results; the
// result shapes come from the schema. `impl` receives the implementation
// the session picked for the op.
std::vector<Tensor> runSession(const std::string &kind, const AttrMap &attrs,
                               const std::vector<Tensor> &inputs,
                               const std::string &backend,
                               std::string *impl = nullptr) {
  gopt::plan::Op op = makeOp(kind, attrs);
  auto shapes = inferShapes(op, inputs, defaultResults(kind));
  EXPECT_TRUE(shapes.ok()) << shapes.status().toString();
  if (!shapes.ok())
    return {};
  PlanBuilder b(kind);
  std::vector<int> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.addInput("in" + std::to_string(i), inputs[i].dtype(),
                             inputs[i].shape()));
  for (size_t i = 0; i < shapes->size(); ++i)
    outs.push_back(b.addOutput("out" + std::to_string(i), F32, (*shapes)[i]));
  b.addOp(kind, "op", ins, outs, attrs);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  if (!plan.ok())
    return {};
  SessionOptions options;
  options.backend = backend;
  options.threads = 2;
  auto session = Session::create(*plan, options);
  EXPECT_TRUE(session.ok()) << session.status().toString();
  if (!session.ok())
    return {};
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE((*session)->setInput("in" + std::to_string(i), inputs[i]).ok());
  // Twice: the second run must not depend on state left by the first, and
  // writes every result element (the first run's results are overwritten
  // with NaNs in between, as an arena holds other ops' values).
  for (int run = 0; run < 2; ++run) {
    Status s = (*session)->run();
    EXPECT_TRUE(s.ok()) << s.toString();
    if (!s.ok())
      return {};
    for (size_t i = 0; run == 0 && i < shapes->size(); ++i) {
      StatusOr<Tensor> view = (*session)->output("out" + std::to_string(i));
      if (view.ok())
        std::memset(view->data(), 0xff, view->byteSize());
    }
  }
  if (impl)
    for (const OpProfile &p : (*session)->opProfiles())
      if (p.name == "op")
        *impl = p.implementation;
  std::vector<Tensor> results;
  for (size_t i = 0; i < shapes->size(); ++i)
    results.push_back((*session)->output("out" + std::to_string(i))->clone());
  return results;
}

// "cpu" runs `kind` with implementation `impl` and agrees with the
// reference on every result.
void expectCpuMatchesReference(const std::string &kind, const AttrMap &attrs,
                               const std::vector<Tensor> &inputs,
                               const std::string &impl, double rel = 1e-4) {
  SCOPED_TRACE(kind);
  std::vector<Tensor> ref = runSession(kind, attrs, inputs, "reference");
  std::string used;
  std::vector<Tensor> cpu = runSession(kind, attrs, inputs, "cpu", &used);
  EXPECT_EQ(used, impl);
  ASSERT_EQ(ref.size(), cpu.size());
  for (size_t i = 0; i < ref.size(); ++i)
    expectClose(cpu[i], ref[i], rel, kind + " result " + std::to_string(i));
}

Tensor scaled(Tensor t, float s) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] *= s;
  return t;
}

//===----------------------------------------------------------------------===//
// relu_grad
//===----------------------------------------------------------------------===//

TEST(ReluGrad, PassesWherePositive) {
  Tensor dy = makeF32({5}, {1, 2, 3, 4, 5});
  Tensor y = makeF32({5}, {0.5f, 0, -1, 2, -0.0f});
  for (const char *backend : {"reference", "cpu"})
    expectNear(values<float>(runSession("relu_grad", {}, {dy, y}, backend)[0]),
               {1, 0, 0, 4, 0});
}

TEST(ReluGrad, FastMatchesReference) {
  Tensor y = randomF32({4, 32, 26, 26}, 2);
  for (int64_t i = 0; i < y.numElements(); i += 7)
    y.data<float>()[i] = 0; // exactly zero: no gradient
  expectCpuMatchesReference("relu_grad", {}, {randomF32({4, 32, 26, 26}, 1), y},
                            "fast", 0);
}

//===----------------------------------------------------------------------===//
// conv2d gradients
//===----------------------------------------------------------------------===//

struct ConvCase {
  const char *name;
  AttrMap attrs;
  Shape x, filter;
};

std::vector<ConvCase> convCases() {
  return {
      {"NhwcStride2AsymmetricPads",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({1, 0, 2, 1})}},
       {2, 7, 6, 3},
       {3, 3, 3, 4}},
      {"NchwDilatedGrouped",
       {{"data_format", stringAttr("NCHW")},
        {"filter_format", stringAttr("OIHW")},
        {"dilations", intsAttr({2, 1})},
        {"strides", intsAttr({1, 2})},
        {"groups", intAttr(2)},
        {"pads", intsAttr({0, 1, 1, 0})}},
       {2, 4, 7, 8},
       {6, 2, 3, 2}},
      // SAME for a 3x3 stride-1 window, as autodiff resolves it: the conv
      // gradients take explicit pads only.
      {"NhwcDepthwiseSamePads",
       {{"groups", intAttr(3)}, {"pads", intsAttr({1, 1, 1, 1})}},
       {1, 5, 6, 3},
       {3, 3, 1, 6}},
      {"NchwHwioStride2Pads",
       {{"data_format", stringAttr("NCHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({2, 1, 0, 2})}},
       {1, 3, 6, 7},
       {2, 3, 3, 5}},
  };
}

AttrMap backpropInputAttrs(AttrMap attrs, Shape x) {
  x[0] = -1;
  attrs["input_shape"] = intsAttr(x);
  return attrs;
}

AttrMap backpropFilterAttrs(AttrMap attrs, const Shape &filter) {
  attrs["filter_shape"] = intsAttr(filter);
  return attrs;
}

TEST(Conv2dGradRef, MatchesFiniteDifferences) {
  uint32_t seed = 10;
  for (const ConvCase &c : convCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++), f = randomF32(c.filter, seed++);
    Tensor y = runRef("conv2d", c.attrs, {x, f})[0];
    Tensor r = randomF32(y.shape(), seed++);
    Tensor dx = runRef("conv2d_backprop_input",
                       backpropInputAttrs(c.attrs, c.x), {r, f})[0];
    Tensor df = runRef("conv2d_backprop_filter",
                       backpropFilterAttrs(c.attrs, c.filter), {x, r})[0];
    // conv2d is linear in each operand: a large step is exact up to f32
    // rounding of the outputs.
    checkGradient("conv2d", c.attrs, {x, f}, 0, r, dx, 0.25, 1e-3);
    checkGradient("conv2d", c.attrs, {x, f}, 1, r, df, 0.25, 1e-3);
  }
}

TEST(Conv2dGradRef, InputShapeBatchComesFromDy) {
  ConvCase c = convCases()[0];
  Shape x = c.x;
  x[0] = 5; // a stale static batch: dy's wins
  gopt::plan::Op op = makeOp("conv2d_backprop_input", [&] {
    AttrMap a = c.attrs;
    a["input_shape"] = intsAttr(x);
    return a;
  }());
  auto shapes =
      inferShapes(op, {randomF32({2, 3, 4, 4}, 1), randomF32(c.filter, 2)}, 1);
  ASSERT_TRUE(shapes.ok()) << shapes.status().toString();
  EXPECT_EQ((*shapes)[0], (Shape{2, 7, 6, 3}));
}

TEST(Conv2dGradOneDnn, MatchesReference) {
  uint32_t seed = 100;
  for (const ConvCase &c : convCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++), f = randomF32(c.filter, seed++);
    Tensor y = runRef("conv2d", c.attrs, {x, f})[0];
    Tensor dy = randomF32(y.shape(), seed++);
    expectCpuMatchesReference("conv2d_backprop_input",
                              backpropInputAttrs(c.attrs, c.x), {dy, f},
                              "onednn");
    expectCpuMatchesReference("conv2d_backprop_filter",
                              backpropFilterAttrs(c.attrs, c.filter), {x, dy},
                              "onednn");
  }
}

// The MNIST CNN's convolutions and ResNet-like ones at a small batch.
TEST(Conv2dGradOneDnn, MnistAndResNetShapes) {
  AttrMap nchw = {{"data_format", stringAttr("NCHW")},
                  {"filter_format", stringAttr("OIHW")}};
  AttrMap strided = nchw;
  strided["strides"] = intsAttr({2, 2});
  strided["pads"] = intsAttr({1, 1, 1, 1});
  AttrMap downsample = nchw;
  downsample["strides"] = intsAttr({2, 2});
  AttrMap nhwcSame = {{"pads", intsAttr({1, 1, 1, 1})}};
  std::vector<ConvCase> cases = {
      {"MnistConv1", nchw, {2, 1, 28, 28}, {32, 1, 3, 3}},
      {"MnistConv2", nchw, {2, 32, 26, 26}, {64, 32, 3, 3}},
      {"ResNetStrided3x3", strided, {2, 64, 16, 16}, {128, 64, 3, 3}},
      {"ResNetDownsample1x1", downsample, {2, 64, 16, 16}, {128, 64, 1, 1}},
      {"ResNetNhwc3x3", nhwcSame, {2, 14, 14, 32}, {3, 3, 32, 32}},
  };
  uint32_t seed = 200;
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++), f = randomF32(c.filter, seed++);
    Tensor y = runRef("conv2d", c.attrs, {x, f})[0];
    Tensor dy = randomF32(y.shape(), seed++);
    if (c.x[1] != 1) // the first layer's input gradient is never needed
      expectCpuMatchesReference("conv2d_backprop_input",
                                backpropInputAttrs(c.attrs, c.x), {dy, f},
                                "onednn");
    expectCpuMatchesReference("conv2d_backprop_filter",
                              backpropFilterAttrs(c.attrs, c.filter), {x, dy},
                              "onednn");
  }
}

// Convolutions of a one-channel NHWC source (the MNIST CNN's first layer)
// run SingleChannelConv's loops, forward (bias, relu) and filter gradient:
// 16/32/64 output channels on the AVX-512 loops where the CPU has them, 24
// on the generic ones; strides, dilations and asymmetric pads. 3x3 windows
// inside the image with 16 or 32 channels keep the filter in registers
// (MnistConv1, Resident*): rows of a multiple of the pixels per step and
// not (remainders), narrower than one step, strided and dilated rows; a
// bottom pad alone sends a 3x3 filter back to the bounds-tested loops.
std::vector<ConvCase> singleChannelCases() {
  AttrMap oddWindow = {{"filter_format", stringAttr("OIHW")},
                       {"strides", intsAttr({2, 1})},
                       {"dilations", intsAttr({1, 2})},
                       {"pads", intsAttr({1, 2, 0, 1})}};
  return {
      {"MnistConv1", {}, {3, 28, 28, 1}, {3, 3, 1, 32}},
      {"OihwStridedDilatedPads", oddWindow, {2, 9, 11, 1}, {16, 1, 3, 2}},
      {"SamePadsGeneric24",
       {{"pads", intsAttr({1, 1, 1, 1})}},
       {2, 7, 5, 1},
       {3, 3, 1, 24}},
      {"Stride2Wide64",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({2, 2, 2, 2})}},
       {1, 12, 13, 1},
       {5, 5, 1, 64}},
      {"Resident16RowsStridedDilated",
       {{"strides", intsAttr({2, 1})}, {"dilations", intsAttr({2, 1})}},
       {2, 13, 11, 1},
       {3, 3, 1, 16}},
      {"Resident16EightColumns", {}, {1, 5, 10, 1}, {3, 3, 1, 16}},
      {"Resident32OihwNarrow",
       {{"filter_format", stringAttr("OIHW")}},
       {2, 6, 5, 1},
       {32, 1, 3, 3}},
      {"PadBottomOnly32",
       {{"pads", intsAttr({0, 1, 0, 0})}},
       {2, 7, 9, 1},
       {3, 3, 1, 32}},
  };
}

TEST(Conv2dSingleChannel, FastMatchesReference) {
  uint32_t seed = 250;
  for (const ConvCase &c : singleChannelCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++), f = randomF32(c.filter, seed++);
    int64_t cout = c.attrs.count("filter_format") ? c.filter[0] : c.filter[3];
    Tensor bias = randomF32({cout}, seed++);
    for (const char *activation : {"none", "relu"}) {
      AttrMap attrs = c.attrs;
      attrs["activation"] = stringAttr(activation);
      expectCpuMatchesReference("conv2d", attrs, {x, f, bias}, "fast", 1e-5);
    }
    expectCpuMatchesReference("conv2d", c.attrs, {x, f}, "fast", 1e-5);
    Tensor y = runRef("conv2d", c.attrs, {x, f})[0];
    Tensor dy = randomF32(y.shape(), seed++);
    expectCpuMatchesReference("conv2d_backprop_filter",
                              backpropFilterAttrs(c.attrs, c.filter), {x, dy},
                              "fast", 1e-5);
  }
}

// relu_grad(g, y) read only by a one-channel filter gradient and its
// per-channel reduce_sum (the MNIST CNN's first conv backward) is one CPU
// step where the filter stays in registers; the fused step matches the
// reference's three ops (f32 and bf16 operands; a bf16 bias gradient
// cast to f32 after the sum), y's zeros, negative zeros and NaNs passing
// nothing and a NaN g where y <= 0 dropped. Shapes outside the fused loops (24
// channels, a padded window) and a dy with a third reader run as three steps
// and match too.
struct ReluFilterBiasCase {
  const char *name;
  Shape x, filter; // filter HWIO unless OIHW
  bool oihw = false;
  AttrMap conv;
  DType type = DType::kF32, biasType = DType::kF32;
  bool thirdReader = false;
  bool fused = true;
};

TEST(ReluFilterBiasGrad, FusedStepMatchesReference) {
  const DType BF16 = DType::kBF16;
  AttrMap padded = {{"pads", intsAttr({1, 1, 1, 1})}};
  std::vector<ReluFilterBiasCase> cases = {
      {"Mnist32", {5, 28, 28, 1}, {3, 3, 1, 32}},
      {"Oihw16", {3, 9, 12, 1}, {16, 1, 3, 3}, true},
      {"Bf16Mnist32", {4, 28, 28, 1}, {3, 3, 1, 32}, false, {}, BF16, BF16},
      {"Bf16F32Bias16", {2, 8, 7, 1}, {3, 3, 1, 16}, false, {}, BF16},
      {"Generic24",
       {2, 8, 9, 1},
       {3, 3, 1, 24},
       false,
       {},
       F32,
       F32,
       false,
       false},
      {"Padded32",
       {2, 8, 9, 1},
       {3, 3, 1, 32},
       false,
       padded,
       F32,
       F32,
       false,
       false},
      {"ThirdReader",
       {2, 8, 9, 1},
       {3, 3, 1, 32},
       false,
       {},
       F32,
       F32,
       true,
       false},
  };
  const bool avx512 = __builtin_cpu_supports("avx512f");
  uint32_t seed = 900;
  for (const ReluFilterBiasCase &c : cases) {
    SCOPED_TRACE(c.name);
    AttrMap conv = c.conv;
    conv["data_format"] = stringAttr("NHWC");
    conv["filter_format"] = stringAttr(c.oihw ? "OIHW" : "HWIO");
    Tensor x = randomF32(c.x, seed++);
    Tensor wf = randomF32(c.filter, seed++);
    Shape yShape = runRef("conv2d", conv, {x, wf})[0].shape();
    const int64_t cout = yShape[3];
    Tensor g = randomF32(yShape, seed++), y = randomF32(yShape, seed++);
    // Edge values of y (zero, -0, NaN pass nothing; +inf passes) and a NaN
    // g where y is not positive (dropped).
    float *py = y.data<float>(), *pg = g.data<float>();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    py[0] = 0.0f, py[1] = -0.0f, py[2] = nan, py[3] = INFINITY;
    py[cout + 5] = -1.0f, pg[cout + 5] = nan;
    if (c.type == BF16)
      x = toBf16(x), g = toBf16(g), y = toBf16(y);
    PlanBuilder b("relu_filter_bias");
    int xi = b.addInput("x", c.type, c.x);
    int gi = b.addInput("g", c.type, yShape);
    int yi = b.addInput("y", c.type, yShape);
    int dy = b.addIntermediate("dy", c.type, yShape);
    int dw = b.addOutput("dw", c.type, c.filter);
    int db = b.addOutput("db", c.biasType, {cout});
    b.addOp("relu_grad", "relu/grad", {gi, yi}, {dy}, {});
    b.addOp("conv2d_backprop_filter", "conv/grad", {xi, dy}, {dw},
            backpropFilterAttrs(conv, c.filter));
    int sum = db;
    if (c.biasType != c.type)
      sum = b.addIntermediate("sum", c.type, {cout});
    b.addOp("reduce_sum", "bias/grad", {dy}, {sum},
            {{"axes", intsAttr({0, 1, 2})}});
    if (sum != db)
      b.addOp("cast", "bias/cast", {sum}, {db});
    if (c.thirdReader) {
      int twice = b.addOutput("twice", c.type, yShape);
      b.addOp("add", "twice", {dy, dy}, {twice}, {});
    }
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    RunResult ref = runPlan(*plan, "reference", {x, g, y});
    RunResult cpu = runPlan(*plan, "cpu", {x, g, y});
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    EXPECT_EQ(kinds(cpu).count("relu_grad+conv2d_backprop_filter+reduce_sum"),
              c.fused && avx512 ? 1u : 0u);
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      Tensor r = ref.outputs[i], a = cpu.outputs[i];
      if (r.dtype() == BF16)
        r = toF32(r), a = toF32(a);
      expectClose(a, r, c.type == BF16 ? 1e-2 : 1e-5,
                  "result " + std::to_string(i));
    }
  }
}

// relu_grad(g, y) read only by a max_pool_grad of tiling NHWC windows and
// its per-channel reduce_sum (the relu and bias gradients behind the MNIST
// CNN's 2x2 pool, as canonicalization leaves them) is one CPU step where
// the channels are a multiple of 16 on AVX-512; it matches the reference's
// three ops in f32 and bf16 (bit for bit: each dx element is one g or 0)
// with ties, NaNs and signed zeros in x, y's zeros and NaNs passing
// nothing, a NaN g where y <= 0 dropped, and an edge remainder. 8 channels
// and a dy with a third reader run as three steps.
TEST(ReluPoolBiasGrad, FusedStepMatchesReference) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    Shape x;
    int64_t k;
    DType type;
    bool thirdReader, fused;
  };
  std::vector<Case> cases = {
      {"Mnist64", {3, 24, 24, 64}, 2, F32, false, true},
      {"Bf16Mnist64", {3, 24, 24, 64}, 2, BF16, false, true},
      {"K3Remainder16", {2, 10, 11, 16}, 3, F32, false, true},
      {"Bf16K3Remainder32", {2, 7, 8, 32}, 3, BF16, false, true},
      {"Channels8", {2, 6, 6, 8}, 2, F32, false, false},
      {"ThirdReader", {2, 6, 6, 16}, 2, F32, true, false},
  };
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  uint32_t seed = 950;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    AttrMap pool = {{"kernel", intsAttr({c.k, c.k})},
                    {"strides", intsAttr({c.k, c.k})}};
    Tensor x = randomF32(c.x, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      float v = std::round(x.data<float>()[i] * 4);
      x.data<float>()[i] = i % 7 ? v : (i % 3 ? NAN : -0.0f);
    }
    Shape yShape = c.x;
    yShape[1] /= c.k, yShape[2] /= c.k;
    Tensor g = randomF32(yShape, seed++), y = randomF32(yShape, seed++);
    float *py = y.data<float>(), *pg = g.data<float>();
    py[0] = 0.0f, py[1] = -0.0f, py[2] = NAN, py[3] = INFINITY;
    py[21] = -1.0f, pg[21] = NAN;
    if (c.type == BF16)
      x = toBf16(x), g = toBf16(g), y = toBf16(y);
    const int64_t channels = c.x[3];
    PlanBuilder b("relu_pool_bias");
    int xi = b.addInput("x", c.type, c.x);
    int gi = b.addInput("g", c.type, yShape);
    int yi = b.addInput("y", c.type, yShape);
    int dy = b.addIntermediate("dy", c.type, yShape);
    int dx = b.addOutput("dx", c.type, c.x);
    int db = b.addOutput("db", c.type, {channels});
    b.addOp("relu_grad", "relu/grad", {gi, yi}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db},
            {{"axes", intsAttr({0, 1, 2})}});
    if (c.thirdReader) {
      int twice = b.addOutput("twice", c.type, yShape);
      b.addOp("add", "twice", {dy, dy}, {twice}, {});
    }
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    RunResult ref = runPlan(*plan, "reference", {x, g, y});
    RunResult cpu = runPlan(*plan, "cpu", {x, g, y});
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    EXPECT_EQ(kinds(cpu).count("relu_grad+max_pool_grad+reduce_sum"),
              c.fused && avx512 ? 1u : 0u);
    // dx: the same bits.
    const Tensor &rdx = ref.outputs[0], &cdx = cpu.outputs[0];
    ASSERT_EQ(rdx.byteSize(), cdx.byteSize());
    EXPECT_EQ(std::memcmp(rdx.data(), cdx.data(), rdx.byteSize()), 0);
    for (size_t i = 1; i < ref.outputs.size(); ++i) {
      Tensor r = ref.outputs[i], a = cpu.outputs[i];
      if (r.dtype() == BF16)
        r = toF32(r), a = toF32(a);
      expectClose(a, r, c.type == BF16 ? 1e-2 : 1e-5,
                  "result " + std::to_string(i));
    }
  }
}

// The transposes around a 2x2 pool and a classifier's flatten in an NHWC
// training step run inside the pool steps: max_pool writes its NCHW
// transpose directly (the NHWC result, read otherwise only by the
// relu_grad, is never made: the fused gradient takes y > 0 from each
// window's maximum), and the fused relu + pool + bias gradient reads g in
// NCHW. Bit for bit against the reference's ops (dx, the pooled result),
// NaNs, signed zeros and ties in x, the bias sums within rounding; a pixel
// count that is not a multiple of 16 (9 pixels); a pooled result that is
// also a graph output keeps its pool step but not the relu_grad's read.
TEST(ReluPoolBiasGrad, TransposesRunInsideThePoolSteps) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    Shape x;
    int64_t k;
    DType type;
    bool pooledOutput;
  };
  std::vector<Case> cases = {
      {"Mnist64", {3, 24, 24, 64}, 2, F32, false},
      {"Bf16Mnist64", {3, 24, 24, 64}, 2, BF16, false},
      {"K3Remainder16", {2, 10, 11, 16}, 3, F32, false},
      {"Bf16K3Remainder32", {2, 7, 8, 32}, 3, BF16, false},
      {"PooledIsAnOutput", {2, 8, 8, 16}, 2, F32, true},
  };
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  uint32_t seed = 970;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    AttrMap pool = {{"kernel", intsAttr({c.k, c.k})},
                    {"strides", intsAttr({c.k, c.k})}};
    Tensor x = randomF32(c.x, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      float v = std::round(x.data<float>()[i] * 4);
      x.data<float>()[i] = i % 7 ? v : (i % 3 ? NAN : -0.0f);
    }
    const int64_t channels = c.x[3], oh = c.x[1] / c.k, ow = c.x[2] / c.k;
    Shape yShape = {c.x[0], oh, ow, channels};
    Shape nchwShape = {c.x[0], channels, oh, ow};
    Tensor g = randomF32(nchwShape, seed++);
    g.data<float>()[21] = NAN;
    if (c.type == BF16)
      x = toBf16(x), g = toBf16(g);
    PlanBuilder b("pool_transposes");
    int xi = b.addInput("x", c.type, c.x);
    int gi = b.addInput("g", c.type, nchwShape);
    int y = c.pooledOutput ? b.addOutput("y", c.type, yShape)
                           : b.addIntermediate("y", c.type, yShape);
    int yt = b.addOutput("yt", c.type, nchwShape);
    int gt = b.addIntermediate("gt", c.type, yShape);
    int dy = b.addIntermediate("dy", c.type, yShape);
    int dx = b.addOutput("dx", c.type, c.x);
    int db = b.addOutput("db", c.type, {channels});
    b.addOp("max_pool", "pool", {xi}, {y}, pool);
    b.addOp("transpose", "pool/t", {y}, {yt},
            {{"perm", intsAttr({0, 3, 1, 2})}});
    b.addOp("transpose", "pool/grad/t", {gi}, {gt},
            {{"perm", intsAttr({0, 2, 3, 1})}});
    b.addOp("relu_grad", "relu/grad", {gt, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db},
            {{"axes", intsAttr({0, 1, 2})}});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    RunResult ref = runPlan(*plan, "reference", {x, g});
    RunResult cpu = runPlan(*plan, "cpu", {x, g});
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    EXPECT_EQ(kinds(cpu).count("relu_grad+max_pool_grad+reduce_sum"),
              avx512 ? 1u : 0u);
    EXPECT_EQ(kinds(cpu).count("max_pool+transpose"),
              avx512 && !c.pooledOutput ? 1u : 0u);
    EXPECT_EQ(kinds(cpu).count("transpose"),
              avx512 ? (c.pooledOutput ? 1u : 0u) : 2u);
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      Tensor r = ref.outputs[i], a = cpu.outputs[i];
      SCOPED_TRACE("result " + std::to_string(i));
      ASSERT_EQ(r.byteSize(), a.byteSize());
      if (r.numElements() != channels) { // dx, yt, y: the same bits
        EXPECT_EQ(std::memcmp(r.data(), a.data(), r.byteSize()), 0);
        continue;
      }
      if (r.dtype() == BF16)
        r = toF32(r), a = toF32(a);
      expectClose(a, r, c.type == BF16 ? 1e-2 : 1e-5, "bias");
    }
  }
}

// The fused relu + pool + bias gradient and the conv2d_backprop_input and
// conv2d_backprop_filter that alone read its dx (the MNIST CNN's second
// conv) run as one step a few images at a time, on two threads' lanes:
// against the reference's ops and against the same plan with
// GOPT_CHUNKED_CONV_GRAD=0 (the source's gradient the same bits, the
// filter's and the bias's within rounding: their sums run in another
// order), in f32 and bf16, with y given or taken from the windows (the
// transposes around the pool, as in the training step), a batch of 5 in
// chunks of 2, 2 and 1, two runs of one session (the sums start over).
// A dx with a third reader keeps the separate steps.
TEST(ReluPoolBiasGrad, ConvGradientsRunInChunks) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    DType type;
    bool transposes, thirdReader;
  };
  std::vector<Case> cases = {
      {"F32", F32, false, false},
      {"Bf16", BF16, false, false},
      {"F32Transposes", F32, true, false},
      {"Bf16Transposes", BF16, true, false},
      {"ThirdReader", F32, false, true},
  };
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  const std::string fused = "relu_grad+max_pool_grad+conv2d_backprop_input+"
                            "conv2d_backprop_filter+reduce_sum";
  uint32_t seed = 990;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t n = 5, cin = 8, cout = 16;
    Shape src = {n, 10, 10, cin}, filter = {3, 3, cin, cout},
          x = {n, 8, 8, cout}, pooled = {n, 4, 4, cout},
          pooledNchw = {n, cout, 4, 4};
    Tensor xv = randomF32(x, seed++), sv = randomF32(src, seed++),
           fv = randomF32(filter, seed++);
    for (int64_t i = 0; i < xv.numElements(); ++i) // ties in the windows
      xv.data<float>()[i] = std::round(xv.data<float>()[i] * 4);
    Tensor gv = randomF32(c.transposes ? pooledNchw : pooled, seed++);
    Tensor yv = randomF32(pooled, seed++);
    if (c.type == BF16)
      xv = toBf16(xv), sv = toBf16(sv), fv = toBf16(fv), gv = toBf16(gv),
      yv = toBf16(yv);
    AttrMap pool = {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})}};
    PlanBuilder b("pool_conv_grads");
    int xi = b.addInput("x", c.type, x);
    int si = b.addInput("src", c.type, src);
    int fi = b.addInput("filter", c.type, filter);
    int gi = b.addInput("g", c.type, c.transposes ? pooledNchw : pooled);
    std::vector<Tensor> inputs = {xv, sv, fv, gv};
    int y = -1, g = gi;
    if (c.transposes) {
      y = b.addIntermediate("y", c.type, pooled);
      int yt = b.addOutput("yt", c.type, pooledNchw);
      g = b.addIntermediate("gt", c.type, pooled);
      b.addOp("max_pool", "pool", {xi}, {y}, pool);
      b.addOp("transpose", "pool/t", {y}, {yt},
              {{"perm", intsAttr({0, 3, 1, 2})}});
      b.addOp("transpose", "pool/grad/t", {gi}, {g},
              {{"perm", intsAttr({0, 2, 3, 1})}});
    } else {
      y = b.addInput("y", c.type, pooled);
      inputs.push_back(yv);
    }
    int dy = b.addIntermediate("dy", c.type, pooled);
    int dx = b.addIntermediate("dx", c.type, x);
    int ds = b.addOutput("dsrc", c.type, src);
    int df = b.addOutput("dfilter", c.type, filter);
    int db = b.addOutput("db", c.type, {cout});
    b.addOp("relu_grad", "relu/grad", {g, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db},
            {{"axes", intsAttr({0, 1, 2})}});
    b.addOp("conv2d_backprop_input", "conv/grad", {dx, fi}, {ds},
            {{"input_shape", intsAttr({-1, 10, 10, cin})}});
    b.addOp("conv2d_backprop_filter", "conv/grad", {si, dx}, {df},
            {{"filter_shape", intsAttr(filter)}});
    if (c.thirdReader) {
      int twice = b.addOutput("twice", c.type, x);
      b.addOp("add", "twice", {dx, dx}, {twice}, {});
    }
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    // Chunks of 2 images: (x, dx, src, dsrc) 14.6 KB an image in f32.
    setenv("GOPT_CHUNKED_CONV_GRAD_KB", c.type == BF16 ? "15" : "29", 1);
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult cpu = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_CHUNKED_CONV_GRAD", "0", 1);
    RunResult whole = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_CHUNKED_CONV_GRAD");
    unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    ASSERT_EQ(whole.outputs.size(), ref.outputs.size());
    EXPECT_EQ(kinds(cpu).count(fused), avx512 && !c.thirdReader ? 1u : 0u);
    EXPECT_EQ(kinds(whole).count(fused), 0u);
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      Tensor r = ref.outputs[i], a = cpu.outputs[i], w = whole.outputs[i];
      ASSERT_EQ(a.byteSize(), w.byteSize());
      if (a.shape() == src || a.shape() == pooledNchw)
        EXPECT_EQ(std::memcmp(a.data(), w.data(), a.byteSize()), 0);
      if (r.dtype() == BF16)
        r = toF32(r), a = toF32(a), w = toF32(w);
      const double rel = c.type == BF16 ? 1e-2 : 1e-5;
      expectClose(a, r, rel, "against the reference");
      expectClose(a, w, rel, "against the separate steps");
    }
  }
}

// The chunked step's oneDNN conv gradients with the filter reordered once
// per run and the filter gradient summed in oneDNN's blocked layout
// (GOPT_CHUNKED_CONV_GRAD_REORDER_ONCE): the same bits as reordering both
// per chunk. 32 -> 64 channels (the MNIST CNN's, whose filter gradient
// oneDNN keeps in 16x16 blocks without padding), 7 images in chunks of 2
// (a tail of 1, in the last of 2 lanes), two runs (the sums start over).
TEST(ReluPoolBiasGrad, ChunkedConvGradReordersOnce) {
  if (!__builtin_cpu_supports("avx512f") ||
      !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    GTEST_SKIP() << "the chunked step needs AVX-512";
  const int64_t n = 7, cin = 32, cout = 64;
  Shape src = {n, 10, 10, cin}, filter = {cout, cin, 3, 3}, x = {n, 8, 8, cout},
        pooled = {n, 4, 4, cout};
  uint32_t seed = 4242;
  Tensor xv = randomF32(x, seed++), sv = randomF32(src, seed++),
         fv = randomF32(filter, seed++), gv = randomF32(pooled, seed++),
         yv = randomF32(pooled, seed++);
  AttrMap pool = {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}};
  PlanBuilder b("pool_conv_grads");
  int xi = b.addInput("x", F32, x);
  int si = b.addInput("src", F32, src);
  int fi = b.addInput("filter", F32, filter);
  int gi = b.addInput("g", F32, pooled);
  int y = b.addInput("y", F32, pooled);
  int dy = b.addIntermediate("dy", F32, pooled);
  int dx = b.addIntermediate("dx", F32, x);
  int ds = b.addOutput("dsrc", F32, src);
  int df = b.addOutput("dfilter", F32, filter);
  int db = b.addOutput("db", F32, {cout});
  b.addOp("relu_grad", "relu/grad", {gi, y}, {dy}, {});
  b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
  b.addOp("reduce_sum", "bias/grad", {dy}, {db},
          {{"axes", intsAttr({0, 1, 2})}});
  b.addOp("conv2d_backprop_input", "conv/grad", {dx, fi}, {ds},
          {{"input_shape", intsAttr({-1, 10, 10, cin})},
           {"filter_format", stringAttr("OIHW")}});
  b.addOp("conv2d_backprop_filter", "conv/grad", {si, dx}, {df},
          {{"filter_shape", intsAttr(filter)},
           {"filter_format", stringAttr("OIHW")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> inputs = {xv, sv, fv, gv, yv};
  // (x, dx, src, dsrc) 58 KB an image: chunks of 2.
  setenv("GOPT_CHUNKED_CONV_GRAD_KB", "117", 1);
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult once = runPlan(*plan, "cpu", inputs);
  setenv("GOPT_CHUNKED_CONV_GRAD_REORDER_ONCE", "0", 1);
  RunResult each = runPlan(*plan, "cpu", inputs);
  unsetenv("GOPT_CHUNKED_CONV_GRAD_REORDER_ONCE");
  unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
  const std::string fused = "relu_grad+max_pool_grad+conv2d_backprop_input+"
                            "conv2d_backprop_filter+reduce_sum";
  EXPECT_EQ(kinds(once).count(fused), 1u);
  EXPECT_EQ(kinds(each).count(fused), 1u);
  ASSERT_EQ(once.outputs.size(), 3u);
  ASSERT_EQ(each.outputs.size(), 3u);
  for (size_t i = 0; i < once.outputs.size(); ++i) {
    SCOPED_TRACE("result " + std::to_string(i));
    const Tensor &a = once.outputs[i], &e = each.outputs[i];
    ASSERT_EQ(a.byteSize(), e.byteSize());
    EXPECT_EQ(std::memcmp(a.data(), e.data(), a.byteSize()), 0);
    expectClose(a, ref.outputs[i], 1e-5, "against the reference");
  }
}

// The chunked step's bf16 filter and source gradients as AMX tile
// products (SmallConvTraining.cpp) against the reference and oneDNN's
// (GOPT_AMX_FILTER_GRAD=0, GOPT_AMX_DATA_GRAD=0, each alone and both),
// both filter layouts, output rows of 8 (a transposed row's zeros reach
// the next row) and of 32 (none), taps of even and odd offsets, a batch of
// 5 in chunks of 2, 2 and 1, two runs (the sums start over). The bias
// gradient is the same bits either way, and each gradient the same bits
// whether the other runs on AMX or not.
TEST(ReluPoolBiasGrad, AmxConvGradientsInChunks) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    int64_t width;
    bool oihw;
  };
  const bool amx = __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("amx-tile") &&
                   __builtin_cpu_supports("amx-bf16");
  const std::string fused = "relu_grad+max_pool_grad+conv2d_backprop_input+"
                            "conv2d_backprop_filter+reduce_sum";
  uint32_t seed = 1990;
  for (const Case &c : {Case{"Hwio10", 10, false}, Case{"Oihw34", 34, true}}) {
    SCOPED_TRACE(c.name);
    const int64_t n = 5, cin = 32, cout = 32, w = c.width, ow = w - 2;
    Shape src = {n, 10, w, cin}, x = {n, 8, ow, cout},
          pooled = {n, 4, ow / 2, cout};
    Shape filter = c.oihw ? Shape{cout, cin, 3, 3} : Shape{3, 3, cin, cout};
    Tensor xv = randomF32(x, seed++), sv = randomF32(src, seed++),
           fv = randomF32(filter, seed++), gv = randomF32(pooled, seed++),
           yv = randomF32(pooled, seed++);
    xv = toBf16(xv), sv = toBf16(sv), fv = toBf16(fv), gv = toBf16(gv),
    yv = toBf16(yv);
    AttrMap pool = {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})}};
    PlanBuilder b("pool_conv_grads");
    int xi = b.addInput("x", BF16, x);
    int si = b.addInput("src", BF16, src);
    int fi = b.addInput("filter", BF16, filter);
    int gi = b.addInput("g", BF16, pooled);
    int y = b.addInput("y", BF16, pooled);
    int dy = b.addIntermediate("dy", BF16, pooled);
    int dx = b.addIntermediate("dx", BF16, x);
    int ds = b.addOutput("dsrc", BF16, src);
    int df = b.addOutput("dfilter", BF16, filter);
    int db = b.addOutput("db", BF16, {cout});
    AttrMap input = {{"input_shape", intsAttr({-1, 10, w, cin})}};
    AttrMap filterAttrs = {{"filter_shape", intsAttr(filter)}};
    if (c.oihw)
      input["filter_format"] = filterAttrs["filter_format"] =
          stringAttr("OIHW");
    b.addOp("relu_grad", "relu/grad", {gi, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db},
            {{"axes", intsAttr({0, 1, 2})}});
    b.addOp("conv2d_backprop_input", "conv/grad", {dx, fi}, {ds}, input);
    b.addOp("conv2d_backprop_filter", "conv/grad", {si, dx}, {df}, filterAttrs);
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    // Chunks of 2 images: (x, dx, src, dsrc) in bf16.
    const int64_t imageBytes = 2 * 2 * (8 * ow * cout + 10 * w * cin);
    setenv("GOPT_CHUNKED_CONV_GRAD_KB",
           std::to_string(2 * imageBytes / 1024 + 1).c_str(), 1);
    std::vector<Tensor> inputs = {xv, sv, fv, gv, yv};
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult cpu = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_AMX_FILTER_GRAD", "0", 1);
    RunResult dataOnly = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_AMX_DATA_GRAD", "0", 1);
    RunResult onednn = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_AMX_FILTER_GRAD");
    RunResult filterOnly = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_AMX_DATA_GRAD");
    unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
    for (const RunResult *r : {&cpu, &dataOnly, &onednn, &filterOnly}) {
      ASSERT_EQ(r->outputs.size(), 3u);
      const char *expected = !amx               ? "chunks"
                             : r == &cpu        ? "chunks+amx"
                             : r == &dataOnly   ? "chunks+amx-data"
                             : r == &filterOnly ? "chunks+amx-filter"
                                                : "chunks";
      for (const OpProfile &p : r->profiles)
        if (p.kind == fused)
          EXPECT_EQ(p.implementation, expected);
    }
    auto same = [](const Tensor &a, const Tensor &b) {
      return a.byteSize() == b.byteSize() &&
             std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
    };
    // Results: dsrc, dfilter, db.
    EXPECT_TRUE(same(cpu.outputs[0], dataOnly.outputs[0]));
    EXPECT_TRUE(same(onednn.outputs[0], filterOnly.outputs[0]));
    EXPECT_TRUE(same(cpu.outputs[1], filterOnly.outputs[1]));
    EXPECT_TRUE(same(onednn.outputs[1], dataOnly.outputs[1]));
    EXPECT_TRUE(same(cpu.outputs[2], onednn.outputs[2]));
    for (size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      Tensor a = toF32(cpu.outputs[i]);
      expectClose(a, toF32(ref.outputs[i]), 1e-2, "against the reference");
      expectClose(a, toF32(onednn.outputs[i]), 1e-2, "against oneDNN's");
    }
  }
}

// The first layer's relu + filter + bias gradient (a one-channel 3x3 conv
// whose relu_grad alone reads the next conv's source gradient, the relu
// output being that conv's source as in the MNIST CNN) runs in the chunked
// step: against the reference and GOPT_CHUNKED_FIRST_CONV_GRAD=0 (the
// other results the same bits), f32 and bf16, a batch of 5 in chunks of 2,
// 2 and 1, two runs; a source gradient that is also a result keeps the
// first layer's step of its own.
TEST(ReluPoolBiasGrad, FirstLayerGradientRunsInChunks) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    DType type;
    bool dsrcResult;
  };
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  const std::string chunked = "relu_grad+max_pool_grad+conv2d_backprop_input+"
                              "conv2d_backprop_filter+reduce_sum";
  const std::string first = chunked + "+relu_grad+conv2d_backprop_filter+"
                                      "reduce_sum";
  uint32_t seed = 2990;
  for (const Case &c : {Case{"F32", F32, false}, Case{"Bf16", BF16, false},
                        Case{"SourceGradientIsAResult", BF16, true}}) {
    SCOPED_TRACE(c.name);
    const int64_t n = 5, cin = 32, cout = 32;
    Shape image = {n, 12, 12, 1}, src = {n, 10, 10, cin},
          filter = {3, 3, cin, cout}, filter0 = {3, 3, 1, cin},
          x = {n, 8, 8, cout}, pooled = {n, 4, 4, cout};
    std::vector<Tensor> inputs = {
        randomF32(x, seed++),      randomF32(src, seed++),
        randomF32(filter, seed++), randomF32(pooled, seed++),
        randomF32(pooled, seed++), randomF32(image, seed++)};
    for (int64_t i = 0; i < inputs[1].numElements(); ++i) // a relu's output
      inputs[1].data<float>()[i] = std::max(inputs[1].data<float>()[i], 0.0f);
    if (c.type == BF16)
      for (Tensor &t : inputs)
        t = toBf16(t);
    AttrMap pool = {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})}};
    PlanBuilder b("first_layer_in_chunks");
    int xi = b.addInput("x", c.type, x);
    int si = b.addInput("src", c.type, src);
    int fi = b.addInput("filter", c.type, filter);
    int gi = b.addInput("g", c.type, pooled);
    int y = b.addInput("y", c.type, pooled);
    int ii = b.addInput("image", c.type, image);
    int dy = b.addIntermediate("dy", c.type, pooled);
    int dx = b.addIntermediate("dx", c.type, x);
    int ds = c.dsrcResult ? b.addOutput("dsrc", c.type, src)
                          : b.addIntermediate("dsrc", c.type, src);
    int dy0 = b.addIntermediate("dy0", c.type, src);
    int df = b.addOutput("dfilter", c.type, filter);
    int db = b.addOutput("db", c.type, {cout});
    int df0 = b.addOutput("dfilter0", c.type, filter0);
    int db0 = b.addOutput("db0", c.type, {cin});
    AttrMap sum = {{"axes", intsAttr({0, 1, 2})}};
    b.addOp("relu_grad", "relu/grad", {gi, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db}, sum);
    b.addOp("conv2d_backprop_input", "conv/grad", {dx, fi}, {ds},
            {{"input_shape", intsAttr({-1, 10, 10, cin})}});
    b.addOp("conv2d_backprop_filter", "conv/grad", {si, dx}, {df},
            {{"filter_shape", intsAttr(filter)}});
    b.addOp("relu_grad", "relu0/grad", {ds, si}, {dy0}, {});
    b.addOp("conv2d_backprop_filter", "conv0/grad", {ii, dy0}, {df0},
            {{"filter_shape", intsAttr(filter0)}});
    b.addOp("reduce_sum", "bias0/grad", {dy0}, {db0}, sum);
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    // Chunks of 2 images: (x, dx, src, dsrc) 20.5 KB an image in bf16.
    setenv("GOPT_CHUNKED_CONV_GRAD_KB", c.type == BF16 ? "42" : "83", 1);
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult cpu = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_CHUNKED_FIRST_CONV_GRAD", "0", 1);
    RunResult apart = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_CHUNKED_FIRST_CONV_GRAD");
    unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
    const bool fused = avx512 && !c.dsrcResult;
    EXPECT_EQ(kinds(cpu).count(first), fused ? 1u : 0u);
    EXPECT_EQ(kinds(cpu).count(chunked), avx512 && !fused ? 1u : 0u);
    EXPECT_EQ(kinds(apart).count(first), 0u);
    EXPECT_EQ(kinds(apart).count(chunked), avx512 ? 1u : 0u);
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    ASSERT_EQ(apart.outputs.size(), ref.outputs.size());
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      Tensor r = ref.outputs[i], a = cpu.outputs[i], w = apart.outputs[i];
      ASSERT_EQ(a.byteSize(), w.byteSize());
      if (a.shape() != filter0 && a.shape() != Shape{cin})
        EXPECT_EQ(std::memcmp(a.data(), w.data(), a.byteSize()), 0);
      if (r.dtype() == BF16)
        r = toF32(r), a = toF32(a), w = toF32(w);
      const double rel = c.type == BF16 ? 1e-2 : 1e-5;
      expectClose(a, r, rel, "against the reference");
      expectClose(a, w, rel, "against the separate step");
    }
  }
}

// Forward conv2d on "cpu" keeps its NCHW output in a blocked layout; the
// gradient kernels read plain copies of it.
TEST(Conv2dGradOneDnn, AfterBlockedForwardInOnePlan) {
  AttrMap conv = {{"data_format", stringAttr("NCHW")},
                  {"filter_format", stringAttr("OIHW")},
                  {"pads", intsAttr({1, 1, 1, 1})},
                  {"activation", stringAttr("relu")}};
  AttrMap grad = conv;
  grad.erase("activation");
  PlanBuilder b("train");
  int x = b.addInput("x", F32, {2, 8, 10, 10});
  int w = b.addInput("w", F32, {16, 8, 3, 3});
  int w2 = b.addInput("w2", F32, {16, 16, 3, 3});
  int h = b.addIntermediate("h", F32, {2, 16, 10, 10});
  int y = b.addIntermediate("y", F32, {2, 16, 10, 10});
  int dw = b.addOutput("dw", F32, {16, 16, 3, 3});
  int dh = b.addOutput("dh", F32, {2, 16, 10, 10});
  b.addOp("conv2d", "conv1", {x, w}, {h}, conv);
  b.addOp("conv2d", "conv2", {h, w2}, {y}, conv);
  b.addOp("conv2d_backprop_filter", "dw", {h, y}, {dw},
          backpropFilterAttrs(grad, {16, 16, 3, 3}));
  b.addOp("conv2d_backprop_input", "dh", {y, w2}, {dh},
          backpropInputAttrs(grad, {2, 16, 10, 10}));
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<std::vector<Tensor>> results;
  std::vector<Tensor> inputs = {randomF32({2, 8, 10, 10}, 1),
                                randomF32({16, 8, 3, 3}, 2),
                                randomF32({16, 16, 3, 3}, 3)};
  for (const char *backend : {"reference", "cpu"}) {
    SessionOptions options;
    options.backend = backend;
    options.threads = 2;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    ASSERT_TRUE((*session)->setInput("x", inputs[0]).ok());
    ASSERT_TRUE((*session)->setInput("w", inputs[1]).ok());
    ASSERT_TRUE((*session)->setInput("w2", inputs[2]).ok());
    Status s = (*session)->run();
    ASSERT_TRUE(s.ok()) << s.toString();
    results.push_back(
        {(*session)->output("dw")->clone(), (*session)->output("dh")->clone()});
  }
  expectClose(results[1][0], results[0][0], 1e-4, "dw");
  expectClose(results[1][1], results[0][1], 1e-4, "dh");
}

//===----------------------------------------------------------------------===//
// max_pool_grad
//===----------------------------------------------------------------------===//

// Distinct values 0.05 apart in random order: finite differences with a
// smaller step never change which element wins.
Tensor distinctValues(const Shape &shape, uint32_t seed) {
  Tensor t = Tensor::allocate(F32, shape);
  std::vector<int> order(t.numElements());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (size_t i = 0; i < order.size(); ++i)
    t.data<float>()[i] = 0.05f * order[i] - 1.0f;
  return t;
}

struct PoolCase {
  const char *name;
  AttrMap attrs;
  Shape x;
};

std::vector<PoolCase> poolCases() {
  return {
      {"NchwK3S2Pads",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})},
        {"data_format", stringAttr("NCHW")}},
       {2, 3, 7, 6}},
      {"NhwcOverlappingAsymmetricPads",
       {{"kernel", intsAttr({3, 2})}, {"pads", intsAttr({0, 2, 1, 0})}},
       {2, 5, 6, 3}},
      // ceil_mode as autodiff gives it to max_pool_grad (explicit pads
      // only): the bottom and right padded by the extra window.
      {"NhwcK2S2CeilModePads",
       {{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({0, 1, 0, 1})}},
       {1, 5, 7, 4}},
  };
}

// avg_pool_grad takes avg_pool's own attributes (SAME, ceil_mode), since
// its divisor depends on them.
std::vector<PoolCase> avgPoolCases() {
  std::vector<PoolCase> cases = poolCases();
  cases.push_back({"NhwcK2S2CeilMode",
                   {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})},
                    {"ceil_mode", boolAttr(true)}},
                   {1, 5, 7, 4}});
  return cases;
}

TEST(MaxPoolGradRef, MatchesFiniteDifferences) {
  uint32_t seed = 1;
  for (const PoolCase &c : poolCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = distinctValues(c.x, seed++);
    Tensor y = runRef("max_pool", c.attrs, {x})[0];
    Tensor r = randomF32(y.shape(), seed++);
    Tensor dx = runRef("max_pool_grad", c.attrs, {x, r})[0];
    checkGradient("max_pool", c.attrs, {x}, 0, r, dx, 0.01, 1e-3);
  }
}

TEST(MaxPoolGradRef, FirstMaximumWinsAndPaddingNever) {
  AttrMap attrs = {{"kernel", intsAttr({2, 2})},
                   {"strides", intsAttr({2, 2})},
                   {"data_format", stringAttr("NCHW")}};
  // Ties: the first element in row-major window order.
  Tensor x = makeF32({1, 1, 2, 4}, {5, 5, 1, 7, 5, 5, 7, 1});
  Tensor dy = makeF32({1, 1, 1, 2}, {10, 20});
  for (const char *backend : {"reference", "cpu"})
    expectNear(
        values<float>(runSession("max_pool_grad", attrs, {x, dy}, backend)[0]),
        {10, 0, 0, 20, 0, 0, 0, 0});
  // Negative values and -inf next to padding: a real element still wins.
  attrs["pads"] = intsAttr({1, 1, 1, 1});
  Tensor neg = makeF32({1, 1, 2, 2}, {-4, -INFINITY, -2, -1});
  Tensor dy2 = makeF32({1, 1, 2, 2}, {1, 2, 3, 4});
  for (const char *backend : {"reference", "cpu"})
    expectNear(values<float>(
                   runSession("max_pool_grad", attrs, {neg, dy2}, backend)[0]),
               {1, 2, 3, 4});
  // NaN beats everything; of several NaNs the last wins (PyTorch), in both
  // layouts.
  for (bool nchw : {false, true}) {
    AttrMap k2 = {{"kernel", intsAttr({2, 2})},
                  {"data_format", stringAttr(nchw ? "NCHW" : "NHWC")}};
    Tensor nan =
        makeF32(nchw ? Shape{1, 1, 2, 2} : Shape{1, 2, 2, 1}, {1, NAN, 3, NAN});
    for (const char *backend : {"reference", "cpu"})
      expectNear(values<float>(runSession("max_pool_grad", k2,
                                          {nan, makeF32({1, 1, 1, 1}, {7})},
                                          backend)[0]),
                 {0, 0, 0, 7});
  }
  // A window of only -inf: its first element.
  AttrMap one = {{"kernel", intsAttr({2, 2})}};
  Tensor inf = makeF32({1, 2, 2, 1}, {-INFINITY, -INFINITY, -INFINITY, 3});
  Tensor inf2 =
      makeF32({1, 2, 2, 1}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY});
  for (const char *backend : {"reference", "cpu"}) {
    expectNear(values<float>(runSession("max_pool_grad", one,
                                        {inf, makeF32({1, 1, 1, 1}, {7})},
                                        backend)[0]),
               {0, 0, 0, 7});
    expectNear(values<float>(runSession("max_pool_grad", one,
                                        {inf2, makeF32({1, 1, 1, 1}, {7})},
                                        backend)[0]),
               {7, 0, 0, 0});
  }
}

//===----------------------------------------------------------------------===//
// avg_pool_grad
//===----------------------------------------------------------------------===//

// avg_pool is linear, so finite differences are exact up to rounding; the
// cases cover avg_pool's divisor rules: padding excluded or counted, SAME,
// and ceil_mode's extra area (never counted).
TEST(AvgPoolGradRef, MatchesFiniteDifferences) {
  std::vector<PoolCase> cases = avgPoolCases();
  cases.push_back({"NchwK3S2PadsCountIncludePad",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({2, 2})},
                    {"pads", intsAttr({1, 1, 1, 1})},
                    {"count_include_pad", boolAttr(true)},
                    {"data_format", stringAttr("NCHW")}},
                   {2, 3, 7, 6}});
  cases.push_back({"NhwcSameK3S2",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({2, 2})},
                    {"padding", stringAttr("SAME")}},
                   {1, 6, 5, 2}});
  cases.push_back({"NhwcCeilModeCountIncludePad",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({2, 2})},
                    {"pads", intsAttr({1, 1, 1, 1})},
                    {"ceil_mode", boolAttr(true)},
                    {"count_include_pad", boolAttr(true)}},
                   {1, 6, 6, 2}});
  uint32_t seed = 70;
  for (const PoolCase &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++);
    Tensor y = runRef("avg_pool", c.attrs, {x})[0];
    Tensor r = randomF32(y.shape(), seed++);
    Tensor dx = runRef("avg_pool_grad", c.attrs, {x, r})[0];
    checkGradient("avg_pool", c.attrs, {x}, 0, r, dx, 0.01, 1e-3);
  }
}

TEST(AvgPoolGradRef, DividesByTheForwardCount) {
  // One 2x2 window at the corner of a 1x1 input padded by 1 on each side:
  // avg_pool divides by 1 (the one real element), or by 4 with
  // count_include_pad; the gradient must divide alike.
  AttrMap attrs = {{"kernel", intsAttr({2, 2})},
                   {"strides", intsAttr({2, 2})},
                   {"pads", intsAttr({1, 1, 1, 1})}};
  Tensor x = makeF32({1, 1, 1, 1}, {3});
  Tensor dy = makeF32({1, 1, 1, 1}, {8});
  expectNear(values<float>(runRef("avg_pool_grad", attrs, {x, dy})[0]), {8});
  attrs["count_include_pad"] = boolAttr(true);
  expectNear(values<float>(runRef("avg_pool_grad", attrs, {x, dy})[0]), {2});
  // ceil_mode: a 3-wide row, kernel 2 stride 2 gives two windows; the last
  // one covers only the third element, divided by 1 even with
  // count_include_pad (the ceil area is not padding).
  AttrMap ceil = {{"kernel", intsAttr({1, 2})},
                  {"strides", intsAttr({1, 2})},
                  {"ceil_mode", boolAttr(true)},
                  {"count_include_pad", boolAttr(true)}};
  Tensor row = makeF32({1, 1, 3, 1}, {1, 2, 3});
  Tensor dyRow = makeF32({1, 1, 2, 1}, {4, 6});
  expectNear(values<float>(runRef("avg_pool_grad", ceil, {row, dyRow})[0]),
             {2, 2, 6});
}

TEST(AvgPoolGradFast, MatchesReference) {
  std::vector<PoolCase> cases = avgPoolCases();
  cases.push_back({"NchwSameCountIncludePadCeil",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({2, 2})},
                    {"padding", stringAttr("SAME")},
                    {"ceil_mode", boolAttr(true)},
                    {"count_include_pad", boolAttr(true)},
                    {"data_format", stringAttr("NCHW")}},
                   {2, 16, 15, 14}});
  cases.push_back({"InceptionNhwcK3S1",
                   {{"kernel", intsAttr({3, 3})},
                    {"pads", intsAttr({1, 1, 1, 1})},
                    {"count_include_pad", boolAttr(true)}},
                   {2, 17, 17, 64}});
  uint32_t seed = 90;
  for (const PoolCase &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++);
    Tensor y = runRef("avg_pool", c.attrs, {x})[0];
    expectCpuMatchesReference("avg_pool_grad", c.attrs,
                              {x, randomF32(y.shape(), seed++)}, "fast", 1e-5);
  }
}

TEST(MaxPoolGradFast, MatchesReference) {
  uint32_t seed = 50;
  std::vector<PoolCase> cases = poolCases();
  cases.push_back({"MnistNchw",
                   {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})},
                    {"data_format", stringAttr("NCHW")}},
                   {4, 64, 24, 24}});
  cases.push_back({"ResNetNhwcK3S2",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({2, 2})},
                    {"pads", intsAttr({1, 1, 1, 1})}},
                   {2, 16, 16, 64}});
  // Windows that tile the image take the write-once path; an edge
  // remainder no window covers gets 0.
  cases.push_back(
      {"MnistNhwcTiled",
       {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}},
       {4, 24, 24, 64}});
  cases.push_back({"NchwTiledRemainder",
                   {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})},
                    {"data_format", stringAttr("NCHW")}},
                   {2, 3, 5, 7}});
  cases.push_back({"NchwTiledRowRemainder",
                   {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})},
                    {"data_format", stringAttr("NCHW")}},
                   {2, 3, 5, 6}});
  cases.push_back(
      {"NhwcTiledK3Remainder",
       {{"kernel", intsAttr({3, 3})}, {"strides", intsAttr({3, 3})}},
       {2, 10, 11, 8}});
  // Channels a multiple of 16 take the AVX-512 loops where the CPU has
  // them (MnistNhwcTiled too): a remainder, a one-column window.
  cases.push_back(
      {"NhwcTiledK3Remainder16",
       {{"kernel", intsAttr({3, 3})}, {"strides", intsAttr({3, 3})}},
       {2, 10, 11, 16}});
  cases.push_back(
      {"NhwcTiledK2x1Channels48",
       {{"kernel", intsAttr({2, 1})}, {"strides", intsAttr({2, 1})}},
       {2, 6, 5, 48}});
  // NHWC windows that do not tile stream by rows through a ring of kernel
  // rows: rows between windows (stride past the kernel) and windows that
  // share all but one row.
  cases.push_back(
      {"NhwcK2S3Gaps",
       {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({3, 3})}},
       {2, 8, 9, 5}});
  cases.push_back({"NhwcK3S1Pads",
                   {{"kernel", intsAttr({3, 3})},
                    {"strides", intsAttr({1, 1})},
                    {"pads", intsAttr({1, 2, 2, 1})}},
                   {1, 6, 7, 16}});
  for (const PoolCase &c : cases) {
    SCOPED_TRACE(c.name);
    // Rounded values make ties common.
    Tensor x = randomF32(c.x, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i)
      x.data<float>()[i] = std::round(x.data<float>()[i] * 4);
    // NaNs (some windows hold two: the last wins) and signed zeros (equal:
    // the first wins) on every path.
    for (int64_t i = 0; i < x.numElements(); i += 5)
      x.data<float>()[i] = i % 3 ? NAN : -0.0f;
    Tensor y = runRef("max_pool", c.attrs, {x})[0];
    expectCpuMatchesReference("max_pool_grad", c.attrs,
                              {x, randomF32(y.shape(), seed++)}, "fast", 1e-6);
  }
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy
//===----------------------------------------------------------------------===//

TEST(SoftmaxCrossEntropyRef, LossIsMeanNegativeLogSoftmax) {
  Tensor logits = scaled(randomF32({4, 7}, 1), 3);
  Tensor labels = makeTensor<int32_t>(DType::kI32, {4}, {0, 6, 3, 3});
  Tensor logSoftmax = runRef("log_softmax", {}, {logits})[0];
  double expected = 0;
  for (int r = 0; r < 4; ++r)
    expected -= logSoftmax.data<float>()[r * 7 + labels.data<int32_t>()[r]];
  expected /= 4;
  for (const char *backend : {"reference", "cpu"}) {
    Tensor loss =
        runSession("softmax_cross_entropy", {}, {logits, labels}, backend)[0];
    EXPECT_EQ(loss.shape(), Shape{});
    EXPECT_NEAR(loss.data<float>()[0], expected, 1e-5);
  }
}

TEST(SoftmaxCrossEntropyRef, StableForLargeLogits) {
  Tensor logits = makeF32({2, 3}, {1000, 0, -1000, 0, 0, 89});
  Tensor labels = makeTensor<int64_t>(DType::kI64, {2}, {1, 2});
  Tensor loss = runRef("softmax_cross_entropy", {}, {logits, labels})[0];
  EXPECT_NEAR(loss.data<float>()[0], (1000.0 + 0.0) / 2, 1e-3);
  Tensor grad = runRef("softmax_cross_entropy_grad", {}, {logits, labels})[0];
  expectNear(values<float>(grad), {0.5f, -0.5f, 0, 0, 0, 0});
}

TEST(SoftmaxCrossEntropyRef, GradMatchesFiniteDifferences) {
  Tensor logits = scaled(randomF32({5, 6}, 2), 2);
  for (DType labelType : {DType::kI32, DType::kI64}) {
    Tensor labels =
        labelType == DType::kI32
            ? makeTensor<int32_t>(DType::kI32, {5}, {0, 5, 2, 2, 1})
            : makeTensor<int64_t>(DType::kI64, {5}, {0, 5, 2, 2, 1});
    Tensor grad = runRef("softmax_cross_entropy_grad", {}, {logits, labels})[0];
    checkGradient("softmax_cross_entropy", {}, {logits, labels}, 0,
                  makeF32({}, {1.0f}), grad, 1e-2, 1e-3);
    // Each row of the gradient sums to zero.
    for (int r = 0; r < 5; ++r) {
      double sum = 0;
      for (int j = 0; j < 6; ++j)
        sum += grad.data<float>()[r * 6 + j];
      EXPECT_NEAR(sum, 0, 1e-7);
    }
  }
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeIsAnError) {
  Tensor logits = randomF32({4, 10}, 3);
  Tensor labels = makeTensor<int32_t>(DType::kI32, {4}, {0, 1, 2, 12});
  for (const char *kind :
       {"softmax_cross_entropy", "softmax_cross_entropy_grad"})
    for (const char *backend : {"reference", "cpu"}) {
      bool isGrad = std::string(kind) == "softmax_cross_entropy_grad";
      auto r = runOp(kind, {}, {logits, labels},
                     {{F32, isGrad ? Shape{4, 10} : Shape{}}}, backend);
      ASSERT_FALSE(r.ok()) << kind << " on " << backend;
      EXPECT_NE(r.status().message().find("label 12 of row 3 is outside "
                                          "[0, 10)"),
                std::string::npos)
          << r.status().toString();
    }
  Tensor negative = makeTensor<int64_t>(DType::kI64, {4}, {0, -1, 2, 3});
  auto r =
      runOp("softmax_cross_entropy", {}, {logits, negative}, {{F32, Shape{}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("label -1 of row 1"), std::string::npos)
      << r.status().toString();
}

TEST(MseLossRef, LossAndGradient) {
  Tensor p = makeF32({2, 2}, {1, 2, 3, 4}), t = makeF32({2, 2}, {0, 2, 5, 3});
  for (const char *backend : {"reference", "cpu"}) {
    Tensor loss = runSession("mse_loss", {}, {p, t}, backend)[0];
    EXPECT_EQ(loss.shape(), Shape{});
    EXPECT_FLOAT_EQ(loss.data<float>()[0], (1 + 0 + 4 + 1) / 4.0f);
    expectNear(
        values<float>(runSession("mse_loss_grad", {}, {p, t}, backend)[0]),
        {0.5f, 0, -1, 0.5f});
  }
  Tensor p2 = randomF32({3, 5}, 1), t2 = randomF32({3, 5}, 2);
  checkGradient("mse_loss", {}, {p2, t2}, 0, makeF32({}, {1.0f}),
                runRef("mse_loss_grad", {}, {p2, t2})[0], 1e-2, 1e-3);
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

std::vector<Tensor> bnInputs(const Shape &shape, int64_t c, uint32_t seed) {
  Tensor var = randomF32({c}, seed + 4);
  for (int64_t i = 0; i < c; ++i)
    var.data<float>()[i] = std::abs(var.data<float>()[i]) + 0.5f;
  // Offset x so that the batch mean is not ~0.
  Tensor x = randomF32(shape, seed);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = 2 * x.data<float>()[i] + 0.5f;
  return {x, randomF32({c}, seed + 1), randomF32({c}, seed + 2),
          randomF32({c}, seed + 3), var};
}

struct BnCase {
  const char *name;
  AttrMap attrs;
  Shape x;
  int64_t channels;
};

std::vector<BnCase> bnCases() {
  return {{"Nhwc", {{"training", boolAttr(true)}}, {2, 3, 4, 5}, 5},
          {"Nchw",
           {{"training", boolAttr(true)},
            {"data_format", stringAttr("NCHW")},
            {"epsilon", floatAttr(1e-2)}},
           {3, 4, 2, 3},
           4},
          {"Rank2", {{"training", boolAttr(true)}}, {6, 3}, 3}};
}

AttrMap gradAttrs(AttrMap attrs) {
  attrs.erase("training");
  return attrs;
}

TEST(BatchNormGradRef, MatchesFiniteDifferences) {
  uint32_t seed = 7;
  for (const BnCase &c : bnCases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = bnInputs(c.x, c.channels, seed);
    seed += 10;
    std::vector<Tensor> fwd = runRef("batch_norm", c.attrs, in, 5);
    Tensor r = randomF32(c.x, seed++);
    std::vector<Tensor> grads = runRef("batch_norm_grad", gradAttrs(c.attrs),
                                       {r, in[0], in[1], fwd[1], fwd[2]});
    checkGradient("batch_norm", c.attrs, in, 0, r, grads[0], 1e-2, 2e-3, 5);
    checkGradient("batch_norm", c.attrs, in, 1, r, grads[1], 1e-2, 2e-3, 5);
    checkGradient("batch_norm", c.attrs, in, 2, r, grads[2], 1e-2, 2e-3, 5);
  }
}

TEST(BatchNormGradFast, MatchesReference) {
  std::vector<BnCase> cases = bnCases();
  cases.push_back({"NchwLarge",
                   {{"data_format", stringAttr("NCHW")}},
                   {4, 16, 10, 10},
                   16});
  cases.push_back({"NhwcLarge", {}, {4, 10, 10, 16}, 16});
  cases.push_back({"Rank2Large", {}, {512, 64}, 64});
  uint32_t seed = 70;
  for (const BnCase &c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = bnInputs(c.x, c.channels, seed);
    seed += 10;
    AttrMap fwdAttrs = c.attrs;
    fwdAttrs["training"] = boolAttr(true);
    std::vector<Tensor> fwd = runRef("batch_norm", fwdAttrs, in, 5);
    expectCpuMatchesReference(
        "batch_norm_grad", gradAttrs(c.attrs),
        {randomF32(c.x, seed++), in[0], in[1], fwd[1], fwd[2]}, "fast");
  }
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

struct SgdConfig {
  double lr, momentum, decay;
  bool nesterov;
};

//===----------------------------------------------------------------------===//
// The f32 weight gradient dy^T x as (x^T dy)^T
//===----------------------------------------------------------------------===//

// C = A^T B with A [K, M], B [K, N], M < N and K >= 512 runs as oneDNN's
// B^T A and a transpose (GOPT_F32_WEIGHT_GRAD_SWAP): the same values as
// the reference and as oneDNN's direct product (other summation order).
// Fails when the product's operands are swapped wrongly or the transpose
// misplaces a block; other shapes keep the direct product.
TEST(MatmulWeightGrad, SwappedProductMatchesReference) {
  struct Case {
    int64_t k, m, n;
    const char *impl;
  };
  uint32_t seed = 7100;
  for (const Case &c : {Case{512, 32, 96, "onednn-swapped"},
                        Case{640, 48, 272, "onednn-swapped"},
                        Case{256, 32, 96, "onednn"},  // K under 512
                        Case{512, 96, 32, "onednn"},  // M >= N
                        Case{512, 32, 40, "onednn"}}) // N not 16s
  {
    SCOPED_TRACE(std::to_string(c.k) + "x" + std::to_string(c.m) + "x" +
                 std::to_string(c.n));
    std::vector<Tensor> inputs = {randomF32({c.k, c.m}, seed++),
                                  randomF32({c.k, c.n}, seed++)};
    AttrMap attrs = {{"transpose_a", boolAttr(true)}};
    expectCpuMatchesReference("matmul", attrs, inputs, c.impl, 1e-5);
    std::string used;
    std::vector<Tensor> swapped =
        runSession("matmul", attrs, inputs, "cpu", &used);
    setenv("GOPT_F32_WEIGHT_GRAD_SWAP", "0", 1);
    std::vector<Tensor> direct =
        runSession("matmul", attrs, inputs, "cpu", &used);
    unsetenv("GOPT_F32_WEIGHT_GRAD_SWAP");
    EXPECT_EQ(used, "onednn");
    ASSERT_EQ(swapped.size(), 1u);
    ASSERT_EQ(direct.size(), 1u);
    expectClose(swapped[0], direct[0], 1e-5, "swapped against direct");
  }
}

TEST(SgdUpdate, ThreeStepsMatchPyTorch) {
  const int64_t n = 37;
  for (SgdConfig cfg :
       {SgdConfig{0.1, 0, 0, false}, SgdConfig{0.05, 0.9, 0, false},
        SgdConfig{0.05, 0.9, 0.01, true}}) {
    AttrMap attrs = {{"lr", floatAttr(cfg.lr)}};
    if (cfg.momentum)
      attrs["momentum"] = floatAttr(cfg.momentum);
    if (cfg.decay)
      attrs["weight_decay"] = floatAttr(cfg.decay);
    if (cfg.nesterov)
      attrs["nesterov"] = boolAttr(true);
    for (const char *backend : {"reference", "cpu"}) {
      SCOPED_TRACE(backend);
      Tensor p = randomF32({n}, 1), v = Tensor::allocate(F32, {n});
      std::vector<double> ep(p.data<float>(), p.data<float>() + n), ev(n, 0.0);
      for (int step = 0; step < 3; ++step) {
        Tensor g = randomF32({n}, 10 + step);
        // torch.optim.SGD.step() with dampening 0.
        for (int64_t i = 0; i < n; ++i) {
          double gi = g.data<float>()[i] + cfg.decay * ep[i];
          ev[i] = cfg.momentum * ev[i] + gi;
          gi = cfg.nesterov ? gi + cfg.momentum * ev[i] : ev[i];
          ep[i] -= cfg.lr * gi;
        }
        std::vector<Tensor> out =
            runSession("sgd_update", attrs, {p, g, v}, backend);
        ASSERT_EQ(out.size(), 2u);
        p = out[0];
        v = out[1];
      }
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(p.data<float>()[i], ep[i], 1e-6) << i;
        EXPECT_NEAR(v.data<float>()[i], ev[i], 1e-6) << i;
      }
    }
  }
}

TEST(AdamUpdate, ThreeStepsMatchPyTorch) {
  const int64_t n = 41;
  for (double decay : {0.0, 0.01}) {
    AttrMap attrs = {{"lr", floatAttr(1e-3)}, {"beta2", floatAttr(0.99)}};
    if (decay)
      attrs["weight_decay"] = floatAttr(decay);
    const double b1 = 0.9, b2 = 0.99, eps = 1e-8, lr = 1e-3;
    for (const char *backend : {"reference", "cpu"}) {
      SCOPED_TRACE(backend);
      Tensor p = randomF32({n}, 2), m = Tensor::allocate(F32, {n}),
             v = Tensor::allocate(F32, {n});
      std::vector<double> ep(p.data<float>(), p.data<float>() + n), em(n, 0.0),
          ev(n, 0.0);
      for (int t = 1; t <= 3; ++t) {
        Tensor g = randomF32({n}, 20 + t);
        // torch.optim.Adam.step() (amsgrad off, maximize off).
        for (int64_t i = 0; i < n; ++i) {
          double gi = g.data<float>()[i] + decay * ep[i];
          em[i] = b1 * em[i] + (1 - b1) * gi;
          ev[i] = b2 * ev[i] + (1 - b2) * gi * gi;
          double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
          double denom = std::sqrt(ev[i]) / std::sqrt(bc2) + eps;
          ep[i] -= lr / bc1 * em[i] / denom;
        }
        std::vector<Tensor> out = runSession(
            "adam_update", attrs,
            {p, g, m, v, makeF32({}, {static_cast<float>(t)})}, backend);
        ASSERT_EQ(out.size(), 3u);
        p = out[0];
        m = out[1];
        v = out[2];
      }
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(p.data<float>()[i], ep[i], 1e-6) << i;
        EXPECT_NEAR(m.data<float>()[i], em[i], 1e-6) << i;
        EXPECT_NEAR(v.data<float>()[i], ev[i], 1e-7) << i;
      }
    }
  }
}

TEST(Optimizers, FastMatchesReferenceOnLargeTensors) {
  Shape s = {300, 500}; // above the parallel threshold
  expectCpuMatchesReference("sgd_update",
                            {{"lr", floatAttr(0.01)},
                             {"momentum", floatAttr(0.9)},
                             {"weight_decay", floatAttr(5e-4)},
                             {"nesterov", boolAttr(true)}},
                            {randomF32(s, 1), randomF32(s, 2), randomF32(s, 3)},
                            "fast", 1e-6);
  Tensor v = randomF32(s, 6);
  for (int64_t i = 0; i < v.numElements(); ++i)
    v.data<float>()[i] = std::abs(v.data<float>()[i]) * 1e-3f;
  expectCpuMatchesReference(
      "adam_update",
      {{"lr", floatAttr(1e-3)}, {"weight_decay", floatAttr(0.1)}},
      {randomF32(s, 4), randomF32(s, 5), scaled(randomF32(s, 7), 0.1f), v,
       makeF32({}, {7})},
      "fast", 1e-5);
}

TEST(AdamUpdate, StepBelowOneIsAnError) {
  Tensor p = randomF32({3}, 1);
  for (const char *backend : {"reference", "cpu"}) {
    auto r = runOp("adam_update", {{"lr", floatAttr(0.1)}},
                   {p, p, p, p, makeF32({}, {0})},
                   {{F32, {3}}, {F32, {3}}, {F32, {3}}}, backend);
    ASSERT_FALSE(r.ok()) << backend;
    EXPECT_NE(r.status().message().find("step 0 must be >= 1"),
              std::string::npos)
        << r.status().toString();
  }
}

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_mean fast kernels (bias gradients)
//===----------------------------------------------------------------------===//

TEST(FastReduce, MatchesReference) {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    bool keep;
  };
  std::vector<Case> cases = {
      {{8, 64, 24, 24}, {0, 2, 3}, false}, // NCHW conv bias gradient
      {{64, 128}, {0}, false},             // dense bias gradient
      {{4, 9, 9, 32}, {0, 1, 2}, true},    // NHWC, keep_dims
      {{64, 1000}, {-1}, false},           // row sums
      {{3, 5, 7}, {}, false},              // everything
      {{1, 200, 1, 300}, {0, 2, 3}, false},
      {{2, 1, 3}, {1}, false}, // only a size-1 dim
  };
  uint32_t seed = 1;
  for (const Case &c : cases)
    for (const char *kind : {"reduce_sum", "reduce_mean"}) {
      SCOPED_TRACE(shapeToString(c.x));
      expectCpuMatchesReference(
          kind, {{"axes", intsAttr(c.axes)}, {"keep_dims", boolAttr(c.keep)}},
          {randomF32(c.x, seed++)}, "fast", 1e-5);
    }
  // A reduced dim between kept ones is left to the reference.
  expectCpuMatchesReference("reduce_sum", {{"axes", intsAttr({1})}},
                            {randomF32({4, 5, 6}, 9)}, "reference", 0);
}

// The dense layers' weight gradients: matmul(dy, x, transpose_a) on oneDNN.
TEST(MatmulTransposeA, WeightGradientShapeOnOneDnn) {
  expectCpuMatchesReference("matmul", {{"transpose_a", boolAttr(true)}},
                            {randomF32({16, 128}, 1), randomF32({16, 300}, 2)},
                            "onednn", 1e-5);
}

//===----------------------------------------------------------------------===//
// Schema errors
//===----------------------------------------------------------------------===//

Status shapeError(const std::string &kind, const AttrMap &attrs,
                  const std::vector<Tensor> &inputs) {
  return inferShapes(makeOp(kind, attrs), inputs, defaultResults(kind))
      .status();
}

void expectShapeError(const std::string &kind, const AttrMap &attrs,
                      const std::vector<Tensor> &inputs,
                      const std::string &needle) {
  Status s = shapeError(kind, attrs, inputs);
  ASSERT_FALSE(s.ok()) << kind << " accepted " << needle;
  EXPECT_NE(s.message().find(needle), std::string::npos)
      << kind << ": " << s.message();
}

TEST(TrainingSchemas, RejectMismatchedShapesAndTypes) {
  Tensor a = randomF32({2, 3}, 1);
  expectShapeError("relu_grad", {}, {a, randomF32({3, 2}, 2)},
                   "expects dy of y's shape [3, 2], got [2, 3]");

  ConvCase c = convCases()[0]; // x [2,7,6,3], filter [3,3,3,4], y [2,3,4,4]
  AttrMap in = backpropInputAttrs(c.attrs, c.x);
  expectShapeError("conv2d_backprop_input", in,
                   {randomF32({2, 4, 5, 4}, 1), randomF32(c.filter, 2)},
                   "expects dy (the conv's output) of shape [2, 3, 4, 4], got "
                   "[2, 4, 5, 4]");
  AttrMap badInput = c.attrs;
  badInput["input_shape"] = intsAttr({-1, 7, 6});
  expectShapeError("conv2d_backprop_input", badInput,
                   {randomF32({2, 3, 4, 4}, 1), randomF32(c.filter, 2)},
                   "expects input_shape of 4 entries, got 3");
  AttrMap fl = backpropFilterAttrs(c.attrs, {3, 3, 2, 4});
  expectShapeError("conv2d_backprop_filter", fl,
                   {randomF32(c.x, 1), randomF32({2, 3, 4, 4}, 2)},
                   "input channels");
  expectShapeError("conv2d_backprop_filter",
                   backpropFilterAttrs(c.attrs, c.filter),
                   {randomF32(c.x, 1), randomF32({2, 3, 4, 5}, 2)},
                   "expects dy (the conv's output) of shape [2, 3, 4, 4]");

  AttrMap pool = {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}};
  expectShapeError("max_pool_grad", pool,
                   {randomF32({1, 4, 4, 2}, 1), randomF32({1, 2, 2, 3}, 2)},
                   "expects dy (the pool's output) of shape [1, 2, 2, 2], got "
                   "[1, 2, 2, 3]");
  expectShapeError("avg_pool_grad", pool,
                   {randomF32({1, 4, 4, 2}, 1), randomF32({1, 3, 3, 2}, 2)},
                   "expects dy (the pool's output) of shape [1, 2, 2, 2]");

  Tensor logits = randomF32({4, 10}, 1);
  expectShapeError(
      "softmax_cross_entropy", {},
      {logits, makeTensor<int32_t>(DType::kI32, {3}, {0, 1, 2})},
      "expects one label per row of logits (4 rows), got 3 labels");
  expectShapeError("softmax_cross_entropy_grad", {},
                   {logits, randomF32({4}, 2)}, "labels must be i32 or i64");
  expectShapeError("softmax_cross_entropy", {},
                   {randomF32({4, 10, 1}, 1),
                    makeTensor<int32_t>(DType::kI32, {4}, {0, 1, 2, 3})},
                   "expects logits of rank 2 ([batch, classes]), got rank 3");

  expectShapeError(
      "mse_loss", {}, {a, randomF32({2, 4}, 3)},
      "expects target of the prediction's shape [2, 3], got [2, 4]");

  AttrMap lr = {{"lr", floatAttr(0.1)}};
  expectShapeError(
      "sgd_update", lr, {a, a, randomF32({2, 4}, 3)},
      "expects velocity of the parameter's shape [2, 3], got [2, 4]");
  expectShapeError(
      "adam_update", lr, {a, a, a, a, randomF32({2}, 4)},
      "expects step to be a scalar [] ([1] is accepted too), got [2]");
  expectShapeError("adam_update", lr, {a, randomF32({6}, 1), a, a, a},
                   "expects grad of the parameter's shape [2, 3], got [6]");

  std::vector<Tensor> bn = bnInputs({2, 3, 4, 5}, 5, 1);
  expectShapeError("batch_norm_grad", {},
                   {bn[0], bn[0], randomF32({4}, 1), bn[3], bn[4]},
                   "expects scale to have 5 elements (one per channel), got 4");
  expectShapeError("batch_norm_grad", {{"data_format", stringAttr("NCHW")}},
                   {bn[0], bn[0], bn[1], bn[3], bn[4]},
                   "expects scale to have 3 elements (one per channel), got 5");
  expectShapeError("batch_norm_grad", {},
                   {bn[0], randomF32({2, 3, 4, 6}, 1), bn[1], bn[3], bn[4]},
                   "expects dy of x's shape [2, 3, 4, 6], got [2, 3, 4, 5]");
}

TEST(TrainingSchemas, RequiredAttributesAndCountsAreChecked) {
  // Through the plan validator: lr is required, results are counted.
  Tensor a = randomF32({3}, 1);
  auto r = runOp("sgd_update", {}, {a, a, a}, {{F32, {3}}, {F32, {3}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing required attribute 'lr'"),
            std::string::npos)
      << r.status().toString();
  r = runOp("sgd_update", {{"lr", floatAttr(0.1)}}, {a, a, a}, {{F32, {3}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("results"), std::string::npos)
      << r.status().toString();
  r = runOp("conv2d_backprop_input", {},
            {randomF32({1, 2, 2, 1}, 1), randomF32({1, 1, 1, 1}, 2)},
            {{F32, {1, 2, 2, 1}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'input_shape'"), std::string::npos)
      << r.status().toString();
}

// The MNIST CNN's bf16 32->64 layer and its pool in a training step: the
// fused AMX conv + pool step records each window's winners and the chunked
// pool + conv gradient scatters dy by them without reading the conv's
// result (which it then does not write). Against GOPT_POOL_WINNER_MASK=0
// (the winners found in the conv's result again): every result the same
// bits; and close to the reference. Integer operands (the conv's sums
// exact: many ties in the windows, zeros and negatives that the relu after
// the pool stops), a NaN in g, a batch of 5 in chunks of 2, 2 and 1, two
// runs of one session; with the conv's relu or not, with the conv's
// result a graph output too (then written), and with a NaN in the source
// (NaN windows: only the same bits, the reference's sums are NaN too).
// Also the same bits as with the pool a step of its own
// (GOPT_AMX_CONV_POOL=0: FastKernels.cpp's pool and the compares in x),
// and as with the fused pool's NaN bookkeeping on every image
// (GOPT_CONV_POOL_NO_NAN_PASS=0; on, the images without a NaN skip it).
TEST(ReluPoolBiasGrad, PoolWinnerMasksFromTheForward) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    bool relu, convOutput, nan;
  };
  const bool amx = __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("amx-tile") &&
                   __builtin_cpu_supports("amx-bf16");
  const std::string chunked = "relu_grad+max_pool_grad+conv2d_backprop_input+"
                              "conv2d_backprop_filter+reduce_sum";
  uint32_t seed = 3990;
  for (const Case &c :
       {Case{"Plain", false, false, false}, Case{"Relu", true, false, false},
        Case{"ConvIsAnOutput", false, true, false},
        Case{"NaNInTheSource", false, false, true}}) {
    SCOPED_TRACE(c.name);
    const int64_t n = 5, cin = 32, cout = 64;
    Shape src = {n, 10, 10, cin}, filter = {3, 3, cin, cout},
          x = {n, 8, 8, cout}, pooled = {n, 4, 4, cout},
          pooledNchw = {n, cout, 4, 4};
    auto integers = [&](const Shape &shape) {
      Tensor t = randomF32(shape, seed++);
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.data<float>()[i] = std::round(t.data<float>()[i] * 1.4f);
      return t;
    };
    Tensor gv = randomF32(pooledNchw, seed++);
    gv.data<float>()[21] = NAN;
    Tensor sv = integers(src);
    if (c.nan) // image 1, row 4, column 5, channel 3
      sv.data<float>()[((1 * 10 + 4) * 10 + 5) * cin + 3] = NAN;
    std::vector<Tensor> inputs = {toBf16(sv), toBf16(integers(filter)),
                                  integers({cout}), toBf16(gv)};
    AttrMap pool = {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})}};
    PlanBuilder b("conv_pool_grads");
    int si = b.addInput("src", BF16, src);
    int fi = b.addInput("filter", BF16, filter);
    int bi = b.addInput("bias", F32, {cout});
    int gi = b.addInput("g", BF16, pooledNchw);
    int xi = c.convOutput ? b.addOutput("x", BF16, x)
                          : b.addIntermediate("x", BF16, x);
    int y = b.addIntermediate("y", BF16, pooled);
    int yt = b.addOutput("yt", BF16, pooledNchw);
    int gt = b.addIntermediate("gt", BF16, pooled);
    int dy = b.addIntermediate("dy", BF16, pooled);
    int dx = b.addIntermediate("dx", BF16, x);
    int ds = b.addOutput("dsrc", BF16, src);
    int df = b.addOutput("dfilter", BF16, filter);
    int db = b.addOutput("db", BF16, {cout});
    AttrMap conv;
    if (c.relu)
      conv["activation"] = stringAttr("relu");
    b.addOp("conv2d", "conv", {si, fi, bi}, {xi}, conv);
    b.addOp("max_pool", "pool", {xi}, {y}, pool);
    b.addOp("transpose", "pool/t", {y}, {yt},
            {{"perm", intsAttr({0, 3, 1, 2})}});
    b.addOp("transpose", "pool/grad/t", {gi}, {gt},
            {{"perm", intsAttr({0, 2, 3, 1})}});
    b.addOp("relu_grad", "relu/grad", {gt, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias/grad", {dy}, {db},
            {{"axes", intsAttr({0, 1, 2})}});
    b.addOp("conv2d_backprop_input", "conv/grad", {dx, fi}, {ds},
            {{"input_shape", intsAttr({-1, 10, 10, cin})}});
    b.addOp("conv2d_backprop_filter", "conv/grad", {si, dx}, {df},
            {{"filter_shape", intsAttr(filter)}});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    // Chunks of 2 images: (x, dx, src, dsrc) in bf16.
    const int64_t imageBytes = 2 * 2 * (8 * 8 * cout + 10 * 10 * cin);
    setenv("GOPT_CHUNKED_CONV_GRAD_KB",
           std::to_string(2 * imageBytes / 1024 + 1).c_str(), 1);
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult masked = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_POOL_WINNER_MASK", "0", 1);
    RunResult fromX = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_POOL_WINNER_MASK");
    setenv("GOPT_CONV_POOL_NO_NAN_PASS", "0", 1); // NaN bookkeeping always
    RunResult nanBookkeeping = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_CONV_POOL_NO_NAN_PASS");
    setenv("GOPT_AMX_CONV_POOL", "0", 1); // the pool a step of its own
    RunResult separate = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_AMX_CONV_POOL");
    unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
    if (amx) {
      EXPECT_EQ(kinds(masked).count("conv2d+max_pool+transpose"), 1u);
      EXPECT_EQ(kinds(masked).count(chunked), 1u);
    }
    ASSERT_EQ(masked.outputs.size(), ref.outputs.size());
    ASSERT_EQ(fromX.outputs.size(), ref.outputs.size());
    ASSERT_EQ(separate.outputs.size(), ref.outputs.size());
    ASSERT_EQ(nanBookkeeping.outputs.size(), ref.outputs.size());
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      const Tensor &a = masked.outputs[i], &w = fromX.outputs[i],
                   &p = separate.outputs[i], &nb = nanBookkeeping.outputs[i];
      ASSERT_EQ(a.byteSize(), w.byteSize());
      ASSERT_EQ(a.byteSize(), p.byteSize());
      ASSERT_EQ(a.byteSize(), nb.byteSize());
      EXPECT_EQ(std::memcmp(a.data(), w.data(), a.byteSize()), 0);
      EXPECT_EQ(std::memcmp(a.data(), p.data(), a.byteSize()), 0);
      EXPECT_EQ(std::memcmp(a.data(), nb.data(), a.byteSize()), 0);
      if (!c.nan)
        expectClose(toF32(a), toF32(ref.outputs[i]), 2e-2,
                    "against the reference");
    }
  }
}

// The MNIST CNN's first two bf16 layers in a training step: the one-channel
// 1->32 conv + relu runs inside the AMX 32->64 conv + pool step (one image
// at a time into the cache) and each backward chunk recomputes its result
// from the images instead of reading it, which is then not written at all
// unless something else reads it (here: a graph output). Against
// GOPT_FIRST_CONV_RECOMPUTE=0 (the first conv a step of its own, its result
// stored and read back) and GOPT_SINGLE_CHANNEL_BF16_CONVERT=0 (its results
// rounded by integer ops instead of VCVTNE2PS2BF16): every result the same
// bits; and close to the reference. Batch 5 in chunks of 2, 2 and 1; a NaN
// image pixel (NaN results, which the conversion leaves to the integer
// rounding); tiny operands whose sums are f32 denormals (which
// VCVTNE2PS2BF16 would flush to zero). Fails when the recomputed result
// differs from the stored one or the skipped one is read.
TEST(ReluPoolBiasGrad, FirstConvRecomputedFromItsImages) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    bool sourceOutput, nan, tiny;
  };
  const bool amx = __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("amx-tile") &&
                   __builtin_cpu_supports("amx-bf16");
  uint32_t seed = 4100;
  for (const Case &c : {Case{"Plain", false, false, false},
                        Case{"SourceIsAnOutput", true, false, false},
                        Case{"NaNInTheImage", false, true, false},
                        Case{"DenormalSums", true, false, true}}) {
    SCOPED_TRACE(c.name);
    const int64_t n = 5, c1 = 32, c2 = 64;
    Shape image = {n, 12, 12, 1}, filter1 = {3, 3, 1, c1},
          src = {n, 10, 10, c1}, filter2 = {3, 3, c1, c2}, x = {n, 8, 8, c2},
          pooled = {n, 4, 4, c2}, pooledNchw = {n, c2, 4, 4};
    auto integers = [&](const Shape &shape, float scale) {
      Tensor t = randomF32(shape, seed++);
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.data<float>()[i] = std::round(t.data<float>()[i] * 1.4f) * scale;
      return t;
    };
    Tensor iv = integers(image, c.tiny ? 1e-20f : 0.25f);
    if (c.nan) // image 1, row 4, column 5
      iv.data<float>()[(1 * 12 + 4) * 12 + 5] = NAN;
    Tensor b1 = integers({c1}, c.tiny ? 0.0f : 0.5f);
    std::vector<Tensor> inputs = {
        toBf16(iv),
        toBf16(integers(filter1, c.tiny ? 1e-19f : 0.5f)),
        b1,
        toBf16(integers(filter2, 0.25f)),
        integers({c2}, 1),
        toBf16(randomF32(pooledNchw, seed++))};
    AttrMap pool = {{"kernel", intsAttr({2, 2})},
                    {"strides", intsAttr({2, 2})}};
    AttrMap relu = {{"activation", stringAttr("relu")}};
    PlanBuilder b("first_conv_recompute");
    int ii = b.addInput("image", BF16, image);
    int f1 = b.addInput("filter1", BF16, filter1);
    int b1i = b.addInput("bias1", F32, {c1});
    int f2 = b.addInput("filter2", BF16, filter2);
    int b2i = b.addInput("bias2", F32, {c2});
    int gi = b.addInput("g", BF16, pooledNchw);
    int si = c.sourceOutput ? b.addOutput("s", BF16, src)
                            : b.addIntermediate("s", BF16, src);
    int xi = b.addIntermediate("x", BF16, x);
    int y = b.addIntermediate("y", BF16, pooled);
    int yt = b.addOutput("yt", BF16, pooledNchw);
    int gt = b.addIntermediate("gt", BF16, pooled);
    int dy = b.addIntermediate("dy", BF16, pooled);
    int dx = b.addIntermediate("dx", BF16, x);
    int ds = b.addIntermediate("ds", BF16, src);
    int ds0 = b.addIntermediate("ds0", BF16, src);
    int df2 = b.addOutput("dfilter2", BF16, filter2);
    int db2 = b.addOutput("dbias2", BF16, {c2});
    int df1 = b.addOutput("dfilter1", BF16, filter1);
    int db1 = b.addOutput("dbias1", BF16, {c1});
    b.addOp("conv2d", "conv1", {ii, f1, b1i}, {si}, relu);
    b.addOp("conv2d", "conv2", {si, f2, b2i}, {xi}, relu);
    b.addOp("max_pool", "pool", {xi}, {y}, pool);
    b.addOp("transpose", "pool/t", {y}, {yt},
            {{"perm", intsAttr({0, 3, 1, 2})}});
    b.addOp("transpose", "pool/grad/t", {gi}, {gt},
            {{"perm", intsAttr({0, 2, 3, 1})}});
    b.addOp("relu_grad", "relu/grad", {gt, y}, {dy}, {});
    b.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx}, pool);
    b.addOp("reduce_sum", "bias2/grad", {dy}, {db2},
            {{"axes", intsAttr({0, 1, 2})}});
    b.addOp("conv2d_backprop_input", "conv2/grad", {dx, f2}, {ds},
            {{"input_shape", intsAttr({-1, 10, 10, c1})}});
    b.addOp("conv2d_backprop_filter", "conv2/grad", {si, dx}, {df2},
            {{"filter_shape", intsAttr(filter2)}});
    b.addOp("relu_grad", "relu1/grad", {ds, si}, {ds0}, {});
    b.addOp("conv2d_backprop_filter", "conv1/grad", {ii, ds0}, {df1},
            {{"filter_shape", intsAttr(filter1)}});
    b.addOp("reduce_sum", "bias1/grad", {ds0}, {db1},
            {{"axes", intsAttr({0, 1, 2})}});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    // Chunks of 2 images: (x, dx, src, dsrc) in bf16.
    const int64_t imageBytes = 2 * 2 * (8 * 8 * c2 + 10 * 10 * c1);
    setenv("GOPT_CHUNKED_CONV_GRAD_KB",
           std::to_string(2 * imageBytes / 1024 + 1).c_str(), 1);
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult on = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_FIRST_CONV_RECOMPUTE", "0", 1);
    RunResult stored = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_FIRST_CONV_RECOMPUTE");
    setenv("GOPT_SINGLE_CHANNEL_BF16_CONVERT", "0", 1);
    RunResult integerRounding = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_SINGLE_CHANNEL_BF16_CONVERT");
    unsetenv("GOPT_CHUNKED_CONV_GRAD_KB");
    if (amx) {
      EXPECT_EQ(kinds(on).count("conv2d+conv2d+max_pool+transpose"), 1u);
      EXPECT_EQ(kinds(on).count("conv2d"), 0u);
      EXPECT_EQ(kinds(stored).count("conv2d+max_pool+transpose"), 1u);
      for (const OpProfile &p : on.profiles) {
        if (p.kind == "conv2d+conv2d+max_pool+transpose")
          EXPECT_EQ(p.implementation, c.sourceOutput
                                          ? "first+amx+pool"
                                          : "first+amx+pool(recompute)");
        if (p.kind.rfind("relu_grad+max_pool_grad", 0) == 0)
          EXPECT_EQ(p.implementation, "chunks+amx+first+recompute");
      }
    }
    ASSERT_EQ(on.outputs.size(), ref.outputs.size());
    ASSERT_EQ(stored.outputs.size(), ref.outputs.size());
    ASSERT_EQ(integerRounding.outputs.size(), ref.outputs.size());
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      const Tensor &a = on.outputs[i], &s = stored.outputs[i],
                   &r = integerRounding.outputs[i];
      ASSERT_EQ(a.byteSize(), s.byteSize());
      ASSERT_EQ(a.byteSize(), r.byteSize());
      EXPECT_EQ(std::memcmp(a.data(), s.data(), a.byteSize()), 0);
      EXPECT_EQ(std::memcmp(a.data(), r.data(), a.byteSize()), 0);
      if (!c.nan && !c.tiny)
        expectClose(toF32(a), toF32(ref.outputs[i]), 2e-2,
                    "against the reference");
    }
    if (c.tiny) { // the first conv's result has denormals (compared above)
      const Tensor &a = on.outputs[0];
      int denormals = 0;
      for (int64_t i = 0; i < a.numElements(); ++i) {
        const uint16_t bits = a.data<uint16_t>()[i];
        denormals += (bits & 0x7f80) == 0 && (bits & 0x7f) != 0;
      }
      EXPECT_GT(denormals, 0);
    }
  }
}

} // namespace

// A plain-layout (NHWC) conv2d whose result only a residual add reads, and
// the add's only a relu, runs as one step (the residual copied into the
// result and added by the convolution's sum post-op) where the residual
// exists before the conv; the residual itself stays as it was.
TEST(ConvResidualAdd, NhwcConvAddReluIsOneStep) {
  const DType BF16 = DType::kBF16;
  struct Case {
    const char *name;
    DType type;
    bool relu;              // a relu reads the add's result
    bool residualAfterConv; // the residual's producer comes after the conv
    bool bias;
  };
  std::vector<Case> cases = {
      {"F32Relu", F32, true, false, true},
      {"Bf16Relu", BF16, true, false, true},
      {"F32NoReluNoBias", F32, false, false, false},
      {"Bf16ResidualLater", BF16, true, true, true},
  };
  uint32_t seed = 1200;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const Shape xs = {2, 9, 10, 32}, ys = {2, 9, 10, 48};
    Tensor x = randomF32(xs, seed++), w = randomF32({48, 32, 3, 3}, seed++),
           bias = randomF32({48}, seed++), r = randomF32(ys, seed++),
           w2 = randomF32({48, 32, 1, 1}, seed++);
    if (c.type == BF16)
      x = toBf16(x), w = toBf16(w), r = toBf16(r), w2 = toBf16(w2);
    AttrMap conv = {{"data_format", stringAttr("NHWC")},
                    {"filter_format", stringAttr("OIHW")},
                    {"pads", intsAttr({1, 1, 1, 1})}};
    AttrMap conv1x1 = {{"data_format", stringAttr("NHWC")},
                       {"filter_format", stringAttr("OIHW")}};
    PlanBuilder b("residual");
    int xi = b.addInput("x", c.type, xs);
    int wi = b.addInput("w", c.type, {48, 32, 3, 3});
    int bi = c.bias ? b.addInput("b", F32, {48}) : -1;
    int ri = b.addInput("r", c.type, ys);
    int w2i = b.addInput("w2", c.type, {48, 32, 1, 1});
    int y = b.addIntermediate("y", c.type, ys);
    int s = c.relu ? b.addIntermediate("s", c.type, ys)
                   : b.addOutput("s", c.type, ys);
    int later =
        c.residualAfterConv ? b.addIntermediate("later", c.type, ys) : -1;
    int out = c.relu ? b.addOutput("out", c.type, ys) : -1;
    int rOut = b.addOutput("r_out", c.type, ys);
    std::vector<int> convIn = {xi, wi};
    if (c.bias)
      convIn.push_back(bi);
    b.addOp("conv2d", "conv", convIn, {y}, conv);
    int residual = ri;
    if (c.residualAfterConv) {
      b.addOp("conv2d", "later", {xi, w2i}, {later}, conv1x1);
      residual = later;
    }
    b.addOp("add", "add", {y, residual}, {s}, {});
    if (c.relu)
      b.addOp("relu", "relu", {s}, {out}, {});
    // The residual is read again afterwards (a relu's output is read by
    // its gradient in a training step).
    b.addOp("relu", "keep", {ri}, {rOut}, {});
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    std::vector<Tensor> inputs = {x, w};
    if (c.bias)
      inputs.push_back(bias);
    inputs.push_back(r);
    inputs.push_back(w2);
    RunResult ref = runPlan(*plan, "reference", inputs);
    RunResult cpu = runPlan(*plan, "cpu", inputs);
    ASSERT_EQ(cpu.outputs.size(), ref.outputs.size());
    std::multiset<std::string> k = kinds(cpu);
    if (cpuBf16Support() != Bf16Support::kReference || c.type == F32) {
      // With the residual computed later, that conv takes the add
      // (conv2d+add+relu too) and the first runs alone.
      EXPECT_EQ(k.count(c.relu ? "conv2d+add+relu" : "conv2d+add"), 1u);
      EXPECT_EQ(k.count("add"), 0u);
    }
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      Tensor rr = ref.outputs[i], a = cpu.outputs[i];
      if (rr.dtype() == BF16)
        rr = toF32(rr), a = toF32(a);
      // bf16: the fused step rounds once, the reference after the conv
      // and after the add.
      expectClose(a, rr, c.type == BF16 ? 2e-2 : 1e-5, "residual");
    }
  }
}

// A training step's forward convolution (a filter that is a plan input,
// not a constant) runs oneDNN's Winograd F(4x4, 3x3) where
// GOPT_TRAINING_CONV_WINOGRAD is on, in its blocked layouts with the plain
// NHWC source and result reordered around it (as the training plans have
// them): the MNIST CNN's 32 -> 64 layer, OIHW and HWIO filters, with a
// bias and a fused ReLU, against the reference and
// against the direct kernel (switch off). Winograd changes the rounding:
// within 2e-5 of the result's largest magnitude (measured: about 1e-6).
TEST(Conv2dTrainingWinograd, MatchesDirectWithinTolerance) {
  AttrMap oihw = {{"filter_format", stringAttr("OIHW")}};
  AttrMap nhwcRelu = {{"activation", stringAttr("relu")}};
  struct Case {
    const char *name;
    AttrMap attrs;
    Shape x, filter;
  };
  std::vector<Case> cases = {
      {"OihwBias", oihw, {5, 26, 26, 32}, {64, 32, 3, 3}},
      {"NhwcBiasRelu", nhwcRelu, {3, 26, 26, 32}, {3, 3, 32, 64}},
  };
  uint32_t seed = 900;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++), f = randomF32(c.filter, seed++);
    Tensor bias = randomF32({64}, seed++);
    std::vector<Tensor> ref =
        runSession("conv2d", c.attrs, {x, f, bias}, "reference");
    std::string usedWino, usedDirect;
    setenv("GOPT_TRAINING_CONV_WINOGRAD", "1", 1);
    std::vector<Tensor> wino =
        runSession("conv2d", c.attrs, {x, f, bias}, "cpu", &usedWino);
    setenv("GOPT_TRAINING_CONV_WINOGRAD", "0", 1);
    std::vector<Tensor> direct =
        runSession("conv2d", c.attrs, {x, f, bias}, "cpu", &usedDirect);
    unsetenv("GOPT_TRAINING_CONV_WINOGRAD");
    if (!__builtin_cpu_supports("avx512f")) // oneDNN's Winograd: AVX-512
      continue;
    EXPECT_EQ(usedWino, "onednn-winograd");
    EXPECT_EQ(usedDirect, "onednn");
    ASSERT_EQ(ref.size(), 1u);
    ASSERT_EQ(wino.size(), 1u);
    ASSERT_EQ(direct.size(), 1u);
    expectClose(wino[0], ref[0], 2e-5, "winograd vs reference");
    expectClose(wino[0], direct[0], 2e-5, "winograd vs direct");
    // Not the direct kernel's bits: the Winograd path ran.
    EXPECT_NE(std::memcmp(wino[0].data<float>(), direct[0].data<float>(),
                          wino[0].numElements() * sizeof(float)),
              0);
  }
}

// GOPT_TRAINING_CONV_GRAD_WINOGRAD=1: the data and filter gradients of the
// MNIST CNN's 32 -> 64 layer on oneDNN's Winograd kernels, the activations
// reordered from and to NHWC around them, against the reference and
// against the direct kernels (switch off), within 2e-5 of the result's
// largest magnitude; required to be taken and to differ in bits from the
// direct kernels (so a path that silently fell back would fail).
TEST(Conv2dTrainingWinograd, GradientsMatchDirectWithinTolerance) {
  AttrMap nhwc = {};
  Shape xShape = {4, 26, 26, 32}, fShape = {3, 3, 32, 64};
  Tensor x = randomF32(xShape, 950), f = randomF32(fShape, 951);
  Tensor y = runRef("conv2d", nhwc, {x, f})[0];
  Tensor dy = randomF32(y.shape(), 952);
  struct Grad {
    const char *kind;
    AttrMap attrs;
    std::vector<Tensor> inputs;
  };
  std::vector<Grad> grads = {
      {"conv2d_backprop_input", backpropInputAttrs(nhwc, xShape), {dy, f}},
      {"conv2d_backprop_filter", backpropFilterAttrs(nhwc, fShape), {x, dy}},
  };
  for (const Grad &g : grads) {
    SCOPED_TRACE(g.kind);
    std::vector<Tensor> ref =
        runSession(g.kind, g.attrs, g.inputs, "reference");
    std::string usedWino, usedDirect;
    setenv("GOPT_TRAINING_CONV_GRAD_WINOGRAD", "1", 1);
    std::vector<Tensor> wino =
        runSession(g.kind, g.attrs, g.inputs, "cpu", &usedWino);
    unsetenv("GOPT_TRAINING_CONV_GRAD_WINOGRAD");
    std::vector<Tensor> direct =
        runSession(g.kind, g.attrs, g.inputs, "cpu", &usedDirect);
    if (!__builtin_cpu_supports("avx512f")) // oneDNN's Winograd: AVX-512
      continue;
    EXPECT_EQ(usedWino, "onednn-winograd");
    EXPECT_EQ(usedDirect, "onednn");
    ASSERT_EQ(wino.size(), 1u);
    ASSERT_EQ(direct.size(), 1u);
    ASSERT_EQ(ref.size(), 1u);
    expectClose(wino[0], ref[0], 2e-5, "winograd vs reference");
    expectClose(wino[0], direct[0], 2e-5, "winograd vs direct");
    EXPECT_NE(std::memcmp(wino[0].data<float>(), direct[0].data<float>(),
                          wino[0].numElements() * sizeof(float)),
              0);
  }
}
