//===- Bf16TrainingKernelsTest.cpp - bf16 gradients on backend "cpu" ------===//
//
// Mixed-precision training (gopt-run --train --precision bf16) hands the
// gradient ops of its bf16 region bf16 operands. On "cpu" the conv
// gradients run on oneDNN where oneDNN has bf16 kernels (the reference
// kernels elsewhere), and relu_grad, max_pool_grad, avg_pool_grad and
// reduce_sum/mean on the fast loops everywhere; each must compute what the
// reference kernels compute, within bf16 rounding.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gopt/runtime/CpuInfo.h"
#include "gopt/runtime/OpSchema.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;
const DType BF16 = DType::kBF16;

// The kernels' predicate (TrainingKernels.cpp): oneDNN's conv gradients
// take bf16 where oneDNN has bf16 kernels, native or emulated on AVX-512.
bool oneDnnConvBf16() { return cpuBf16Support() != Bf16Support::kReference; }

#define SKIP_WITHOUT_ONEDNN_BF16()                                             \
  if (!oneDnnConvBf16())                                                       \
  GTEST_SKIP() << "oneDNN has no bf16 kernels on this CPU (" << cpuIsaName()   \
               << "): the reference kernels run the bf16 conv gradients "      \
                  "(Bf16ConvGradFallback covers that)"

// Result shapes of `kind` on operands of `inputs`' shapes and types.
std::vector<Shape> resultShapes(const std::string &kind, const AttrMap &attrs,
                                const std::vector<Tensor> &inputs) {
  gopt::plan::Op op;
  op.set_kind(kind);
  for (const auto &[name, value] : attrs)
    (*op.mutable_attrs())[name] = value;
  const OpSchema *schema = findOpSchema(kind);
  EXPECT_NE(schema, nullptr) << kind;
  if (!schema)
    return {};
  bool training = attrs.count("training") && attrs.at("training").b();
  int numResults = schema->maxResults >= 0            ? schema->maxResults
                   : kind == "batch_norm" && training ? 5
                                                      : schema->minResults;
  std::vector<Shape> inShapes, outShapes(numResults);
  std::vector<DType> inTypes;
  for (const Tensor &t : inputs) {
    inShapes.push_back(t.shape());
    inTypes.push_back(t.dtype());
  }
  Status s = schema->inferShapes(OpAttrs(op), inShapes, inTypes, outShapes);
  EXPECT_TRUE(s.ok()) << kind << ": " << s.toString();
  return outShapes;
}

// A one-op plan with one result of `inputs[0]`'s element type.
Plan onePlan(const std::string &kind, const AttrMap &attrs,
             const std::vector<Tensor> &inputs) {
  std::vector<Shape> shapes = resultShapes(kind, attrs, inputs);
  PlanBuilder b(kind);
  std::vector<int> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.addInput("in" + std::to_string(i), inputs[i].dtype(),
                             inputs[i].shape()));
  int y =
      b.addOutput("y", inputs[0].dtype(), shapes.empty() ? Shape{} : shapes[0]);
  b.addOp(kind, "op", ins, {y}, attrs);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return plan.ok() ? *plan : Plan();
}

struct Both {
  Tensor ref, cpu;
  std::string cpuImpl; // the implementation "cpu" ran the op on
};

// Runs a one-op plan on "reference" and on "cpu".
Both runBoth(const std::string &kind, const AttrMap &attrs,
             const std::vector<Tensor> &inputs) {
  Plan plan = onePlan(kind, attrs, inputs);
  RunResult ref = runPlan(plan, "reference", inputs);
  RunResult cpu = runPlan(plan, "cpu", inputs);
  if (ref.outputs.empty() || cpu.outputs.empty()) {
    ADD_FAILURE() << kind << ": no results";
    Tensor none = Tensor::allocate(BF16, {1});
    return {none, none, ""};
  }
  Both both{ref.outputs[0], cpu.outputs[0], ""};
  for (const OpProfile &p : cpu.profiles)
    if (p.name == "op")
      both.cpuImpl = p.implementation;
  return both;
}

// Every element within `rel` of the largest magnitude of the reference's:
// oneDNN multiplies bf16 operands and sums in f32 where the reference sums
// in double, and each rounds its result to bf16 once.
void expectCloseBf16(const Tensor &ref, const Tensor &cpu, float rel = 1e-2f) {
  ASSERT_EQ(ref.dtype(), BF16);
  ASSERT_EQ(cpu.dtype(), BF16);
  ASSERT_EQ(ref.shape(), cpu.shape());
  Tensor r = toF32(ref), c = toF32(cpu);
  float scale = 0;
  for (int64_t i = 0; i < r.numElements(); ++i)
    scale = std::max(scale, std::abs(r.data<float>()[i]));
  ASSERT_GT(scale, 0.0f) << "a degenerate test: all zeros";
  int bad = 0;
  for (int64_t i = 0; i < r.numElements() && bad < 5; ++i) {
    float a = r.data<float>()[i], b = c.data<float>()[i];
    if (!(std::abs(a - b) <= rel * scale)) {
      ADD_FAILURE() << "element " << i << ": reference " << a << ", cpu " << b
                    << " (scale " << scale << ")";
      ++bad;
    }
  }
}

void expectSameBits(const Tensor &ref, const Tensor &cpu) {
  ASSERT_EQ(ref.dtype(), cpu.dtype());
  ASSERT_EQ(ref.shape(), cpu.shape());
  int bad = 0;
  for (int64_t i = 0; i < ref.numElements() && bad < 5; ++i)
    if (ref.data<uint16_t>()[i] != cpu.data<uint16_t>()[i]) {
      ADD_FAILURE() << "element " << i << ": reference 0x" << std::hex
                    << ref.data<uint16_t>()[i] << ", cpu 0x"
                    << cpu.data<uint16_t>()[i] << std::dec;
      ++bad;
    }
}

//===----------------------------------------------------------------------===//
// conv2d_backprop_input / conv2d_backprop_filter
//===----------------------------------------------------------------------===//

struct ConvCase {
  const char *name;
  AttrMap attrs;
  Shape x, filter;
};

std::vector<ConvCase> convCases() {
  AttrMap nchw = {{"data_format", stringAttr("NCHW")},
                  {"filter_format", stringAttr("OIHW")}};
  AttrMap strided = nchw;
  strided["strides"] = intsAttr({2, 2});
  strided["pads"] = intsAttr({1, 1, 1, 1});
  return {
      {"NhwcStride2AsymmetricPads",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({1, 0, 2, 1})}},
       {2, 7, 6, 16},
       {3, 3, 16, 32}},
      {"NchwDilatedGrouped",
       {{"data_format", stringAttr("NCHW")},
        {"filter_format", stringAttr("OIHW")},
        {"dilations", intsAttr({2, 1})},
        {"strides", intsAttr({1, 2})},
        {"groups", intAttr(2)},
        {"pads", intsAttr({0, 1, 1, 0})}},
       {2, 32, 9, 8},
       {32, 16, 3, 2}},
      // SAME for a 3x3 stride-1 window, as autodiff resolves it: the conv
      // gradients take explicit pads only.
      {"NhwcDepthwiseSamePads",
       {{"groups", intAttr(16)}, {"pads", intsAttr({1, 1, 1, 1})}},
       {2, 8, 8, 16},
       {3, 3, 1, 16}},
      {"NchwStride2Pads", strided, {2, 16, 10, 10}, {32, 16, 3, 3}},
      // The MNIST CNN's second convolution (at a smaller batch).
      {"MnistConv2", nchw, {2, 32, 26, 26}, {64, 32, 3, 3}},
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

// The inputs of both conv gradients: x, the filter and dy (of the forward
// conv's result shape).
struct ConvOperands {
  Tensor x, filter, dy;
};

ConvOperands convOperands(const ConvCase &c, uint32_t seed) {
  Tensor x = randomF32(c.x, seed), f = randomF32(c.filter, seed + 1);
  std::vector<Shape> y = resultShapes("conv2d", c.attrs, {x, f});
  Shape yShape = y.empty() ? Shape{1} : y[0];
  return {toBf16(x), toBf16(f), randomBf16(yShape, seed + 2)};
}

TEST(Bf16ConvGrad, OneDnnMatchesReference) {
  SKIP_WITHOUT_ONEDNN_BF16();
  uint32_t seed = 300;
  for (const ConvCase &c : convCases()) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both dx = runBoth("conv2d_backprop_input", backpropInputAttrs(c.attrs, c.x),
                      {o.dy, o.filter});
    EXPECT_EQ(dx.cpuImpl, "onednn") << "conv2d_backprop_input";
    expectCloseBf16(dx.ref, dx.cpu);
    Both df = runBoth("conv2d_backprop_filter",
                      backpropFilterAttrs(c.attrs, c.filter), {o.x, o.dy});
    EXPECT_EQ(df.cpuImpl, "onednn") << "conv2d_backprop_filter";
    expectCloseBf16(df.ref, df.cpu);
  }
}

// A one-channel NHWC source (the MNIST CNN's first layer in bf16) runs
// SingleChannelConv's loops on any CPU: products summed in f32, each
// result rounded once.
TEST(Bf16ConvSingleChannel, FastMatchesReference) {
  uint32_t seed = 350;
  std::vector<ConvCase> cases = {
      {"MnistConv1",
       {{"activation", stringAttr("relu")}},
       {2, 28, 28, 1},
       {3, 3, 1, 32}},
      {"OihwStridedPadsGeneric24",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 1})},
        {"pads", intsAttr({1, 2, 0, 1})}},
       {2, 9, 11, 1},
       {24, 1, 3, 3}},
      // The register-resident loops: 16 channels, 9 columns (one step of 8
      // and a remainder); dy read as bf16 in registers.
      {"Resident16", {}, {3, 10, 11, 1}, {3, 3, 1, 16}},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both y = runBoth("conv2d", c.attrs, {o.x, o.filter});
    EXPECT_EQ(y.cpuImpl, "fast") << "conv2d";
    expectCloseBf16(y.ref, y.cpu);
    AttrMap gradAttrs = c.attrs;
    gradAttrs.erase("activation");
    Both df = runBoth("conv2d_backprop_filter",
                      backpropFilterAttrs(gradAttrs, c.filter), {o.x, o.dy});
    EXPECT_EQ(df.cpuImpl, "fast") << "conv2d_backprop_filter";
    expectCloseBf16(df.ref, df.cpu);
  }
}

// Strided NHWC convolutions with small outputs and many channels (ResNet's
// stride-2 3x3 and 1x1 downsample convolutions of layers 3 and 4), and unit
// stride ones at 7x7 and below (layer 4), take the filter gradient as one
// matrix product of the im2col'd windows and dy.
TEST(Bf16ConvGrad, StridedSmallOutputsAsOneMatmul) {
  SKIP_WITHOUT_ONEDNN_BF16();
  // The few-channel cases run on AMX tiles where the CPU has them
  // (Bf16ConvGrad.FewChannelsOnAmxTiles), those with 32k channels on the
  // wide AMX kernel (AmxConvFilterGradTest.cpp): the matmuls here.
  setenv("GOPT_CONV_FILTER_AMX", "0", 1);
  setenv("GOPT_CONV_FILTER_AMX_WIDE", "0", 1);
  uint32_t seed = 380;
  std::vector<ConvCase> cases = {
      {"Stride2Pads3x3Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {2, 14, 14, 64},
       {80, 64, 3, 3}},
      {"Downsample1x1Hwio",
       {{"strides", intsAttr({2, 2})}},
       {2, 13, 13, 64},
       {1, 1, 64, 96}},
      // The matmul writes a 1x1 OIHW filter and any HWIO one as it is;
      // other OIHW filters go through a per-channel permutation.
      {"Downsample1x1Oihw",
       {{"filter_format", stringAttr("OIHW")}, {"strides", intsAttr({2, 2})}},
       {3, 14, 14, 64},
       {112, 64, 1, 1}},
      // A strided 1x1 filter at any output size (ResNet's layer-2
      // downsample: 28x28 here).
      {"Downsample1x1Oihw28x28",
       {{"filter_format", stringAttr("OIHW")}, {"strides", intsAttr({2, 2})}},
       {2, 56, 56, 64},
       {128, 64, 1, 1}},
      {"Stride2Pads3x3Hwio",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({1, 0, 1, 0})}},
       {2, 9, 9, 80},
       {3, 3, 80, 64}},
      // Unit stride at 7x7 and below (ResNet's layer 4).
      {"UnitStride7x7Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {3, 7, 7, 96},
       {64, 96, 3, 3}},
      {"UnitStride5x6Hwio",
       {{"pads", intsAttr({1, 1, 1, 1})}},
       {2, 5, 6, 64},
       {3, 3, 64, 80}},
      // Few input channels and a large output (ResNet's stem): summed over
      // chunks of output rows (two and three chunks here).
      {"FewChannelsStem7x7Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({3, 3, 3, 3})}},
       {2, 112, 112, 3},
       {32, 3, 7, 7}},
      {"FewChannels5x5Hwio",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({2, 1, 2, 1})}},
       {3, 100, 100, 3},
       {5, 5, 3, 48}},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both df = runBoth("conv2d_backprop_filter",
                      backpropFilterAttrs(c.attrs, c.filter), {o.x, o.dy});
    EXPECT_EQ(df.cpuImpl, "onednn-im2col") << "conv2d_backprop_filter";
    expectCloseBf16(df.ref, df.cpu);
  }
  unsetenv("GOPT_CONV_FILTER_AMX");
  unsetenv("GOPT_CONV_FILTER_AMX_WIDE");
}

// Few input channels, 9+ taps and a large output (ResNet's stem) on an
// AMX CPU: tile products of the phase-split input rows and pixel-paired dy
// (ConvGradBf16.cpp). Output columns not a multiple of 32 (the tiles'
// reduction depth), bands of output rows with a remainder, 16-row and
// shorter tiles of (kh, ci) rows, 16 to 80 output channels (a partial
// group of four tiles), both filter layouts.
TEST(Bf16ConvGrad, FewChannelsOnAmxTiles) {
  if (cpuIsaName() != "avx512_core_amx")
    GTEST_SKIP() << "no AMX (" << cpuIsaName() << ")";
  uint32_t seed = 700;
  std::vector<ConvCase> cases = {
      {"Stem7x7Stride2Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({3, 3, 3, 3})}},
       {3, 42, 76, 3},
       {64, 3, 7, 7}},
      {"Stem7x7Stride2Hwio80",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({3, 2, 3, 2})}},
       {2, 35, 70, 3},
       {7, 7, 3, 80}},
      {"Asymmetric5x5Stride2Hwio48",
       {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({2, 1, 2, 1})}},
       {3, 40, 50, 3},
       {5, 5, 3, 48}},
      {"UnitStride3x3FourChannels16",
       {{"filter_format", stringAttr("OIHW")},
        {"pads", intsAttr({1, 1, 0, 2})}},
       {2, 17, 33, 4},
       {16, 4, 3, 3}},
      {"Stride3x1OneChannel32",
       {{"strides", intsAttr({3, 1})}, {"pads", intsAttr({0, 0, 1, 1})}},
       {2, 50, 40, 2},
       {3, 5, 2, 32}},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both df = runBoth("conv2d_backprop_filter",
                      backpropFilterAttrs(c.attrs, c.filter), {o.x, o.dy});
    EXPECT_EQ(df.cpuImpl, "amx") << "conv2d_backprop_filter";
    expectCloseBf16(df.ref, df.cpu);
  }
}

// NHWC 3x3 convolutions with small outputs and 64+ channels both ways
// (ResNet's stride-2 convolutions of layers 3 and 4, layer 4's unit-stride
// ones) on an AMX CPU:
// the input gradient as a matmul into f32 columns and a col2im
// (ConvGradBf16.cpp). Inputs no window reaches stay zero; asymmetric
// strides and pads; both filter layouts; batches in chunks of images.
TEST(Bf16ConvGrad, SmallOutputBackpropInputAsMatmulAndCol2im) {
  if (cpuIsaName() != "avx512_core_amx")
    GTEST_SKIP() << "no AMX (" << cpuIsaName() << ")";
  uint32_t seed = 800;
  std::vector<ConvCase> cases = {
      {"Stride2Pads3x3Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {3, 14, 14, 64},
       {80, 64, 3, 3}},
      // Rows and columns no window reaches stay zero.
      {"Stride3GapsOihw",
       {{"filter_format", stringAttr("OIHW")}, {"strides", intsAttr({3, 3})}},
       {4, 11, 10, 80},
       {64, 80, 3, 3}},
      {"Strides2x3AsymmetricPadsHwio",
       {{"strides", intsAttr({2, 3})}, {"pads", intsAttr({1, 0, 2, 1})}},
       {2, 11, 13, 64},
       {3, 3, 64, 64}},
      // Unit stride at 7x7 and below with 1,024+ output pixels (ResNet's
      // layer 4 at batch 21+).
      {"UnitStride7x7Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {21, 7, 7, 96},
       {64, 96, 3, 3}},
      {"UnitStride5x6Hwio",
       {{"pads", intsAttr({1, 1, 1, 1})}},
       {35, 5, 6, 64},
       {3, 3, 64, 80}},
  };
  // Unit-stride ones run as a forward convolution unless that is off.
  setenv("GOPT_CONV_BACKPROP_INPUT_FORWARD", "0", 1);
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both dx = runBoth("conv2d_backprop_input", backpropInputAttrs(c.attrs, c.x),
                      {o.dy, o.filter});
    EXPECT_EQ(dx.cpuImpl, "onednn-col2im") << "conv2d_backprop_input";
    expectCloseBf16(dx.ref, dx.cpu);
  }
  unsetenv("GOPT_CONV_BACKPROP_INPUT_FORWARD");
}

// 3x3+ windows with 64+ channels both ways and strides up to 2: the input
// gradient as oneDNN's forward convolutions of dy with the flipped,
// transposed filter's taps, one per phase of dx (OIHW and HWIO, asymmetric
// pads, non-square and unpadded windows, odd sizes); with
// GOPT_CONV_BACKPROP_INPUT_FORWARD=0 another kernel runs, close to it.
TEST(Bf16ConvGrad, BackpropInputAsForwardConvs) {
  if (cpuIsaName() != "avx512_core_amx")
    GTEST_SKIP() << "no AMX (" << cpuIsaName() << ")";
  uint32_t seed = 900;
  std::vector<ConvCase> cases = {
      {"Pads3x3Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {3, 7, 7, 64},
       {80, 64, 3, 3}},
      {"AsymmetricPads3x3Hwio",
       {{"pads", intsAttr({1, 0, 2, 1})}},
       {2, 9, 6, 96},
       {3, 3, 96, 64}},
      {"NoPads3x5Oihw",
       {{"filter_format", stringAttr("OIHW")}},
       {2, 8, 11, 64},
       {64, 64, 3, 5}},
      {"Pads5x3Hwio",
       {{"pads", intsAttr({2, 2, 1, 0})}},
       {2, 6, 5, 80},
       {5, 3, 80, 96}},
      // Strided: one forward convolution per phase of dx (ResNet's 3x3/2).
      {"Stride2Pads3x3Oihw",
       {{"filter_format", stringAttr("OIHW")},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {3, 14, 14, 64},
       {80, 64, 3, 3}},
      {"Strides2x1AsymmetricPadsHwio",
       {{"strides", intsAttr({2, 1})}, {"pads", intsAttr({1, 0, 2, 1})}},
       {2, 12, 13, 64},
       {3, 3, 64, 64}},
      {"Stride2NoPads5x5Oihw",
       {{"filter_format", stringAttr("OIHW")}, {"strides", intsAttr({2, 2})}},
       {2, 13, 11, 64},
       {96, 64, 5, 5}},
      // Strided 1x1 (ResNet's downsamples): the phases no tap reaches are
      // zeros.
      {"Stride2Downsample1x1Oihw",
       {{"filter_format", stringAttr("OIHW")}, {"strides", intsAttr({2, 2})}},
       {3, 14, 14, 64},
       {128, 64, 1, 1}},
      {"Stride2OddSizes1x1Hwio",
       {{"strides", intsAttr({2, 2})}},
       {2, 13, 11, 80},
       {1, 1, 80, 64}},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(c.name);
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    AttrMap attrs = backpropInputAttrs(c.attrs, c.x);
    Both dx = runBoth("conv2d_backprop_input", attrs, {o.dy, o.filter});
    EXPECT_EQ(dx.cpuImpl, "onednn-forward");
    expectCloseBf16(dx.ref, dx.cpu);
    setenv("GOPT_CONV_BACKPROP_INPUT_FORWARD", "0", 1);
    Both off = runBoth("conv2d_backprop_input", attrs, {o.dy, o.filter});
    unsetenv("GOPT_CONV_BACKPROP_INPUT_FORWARD");
    EXPECT_NE(off.cpuImpl, "onednn-forward");
    expectCloseBf16(off.cpu, dx.cpu);
  }
}

// Runs in a fresh process where oneDNN is limited to AVX2 (it reads
// DNNL_MAX_CPU_ISA once, at its first use): there it has no bf16 kernels,
// so the factories leave the bf16 conv gradients to the reference kernels
// (the same bits as backend "reference"). Returns the exit status.
int runConvGradsLimitedToAvx2() {
  setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);
  if (oneDnnConvBf16()) {
    std::fprintf(stderr, "bf16 support not reported as reference (%s)\n",
                 cpuIsaName().c_str());
    return 1;
  }
  uint32_t seed = 400;
  for (const ConvCase &c : convCases()) {
    ConvOperands o = convOperands(c, seed);
    seed += 3;
    Both results[] = {
        runBoth("conv2d_backprop_input", backpropInputAttrs(c.attrs, c.x),
                {o.dy, o.filter}),
        runBoth("conv2d_backprop_filter",
                backpropFilterAttrs(c.attrs, c.filter), {o.x, o.dy})};
    for (const Both &r : results) {
      if (r.cpuImpl != "reference") {
        std::fprintf(stderr, "%s: a conv gradient ran on %s\n", c.name,
                     r.cpuImpl.c_str());
        return 1;
      }
      if (r.ref.byteSize() != r.cpu.byteSize() ||
          std::memcmp(r.ref.data(), r.cpu.data(), r.ref.byteSize()) != 0) {
        std::fprintf(stderr, "%s: results differ from the reference\n", c.name);
        return 1;
      }
    }
  }
  std::fprintf(stderr, "ok\n");
  return 0;
}

TEST(Bf16ConvGradFallback, WithoutBf16KernelsTheReferenceRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(runConvGradsLimitedToAvx2()),
              ::testing::ExitedWithCode(0), "ok");
}

//===----------------------------------------------------------------------===//
// relu_grad, max_pool_grad, reduce_sum / reduce_mean: the fast loops
//===----------------------------------------------------------------------===//

TEST(Bf16ReluGrad, FastMatchesReferenceBitForBit) {
  Tensor y = randomF32({4, 32, 26, 26}, 2);
  for (int64_t i = 0; i < y.numElements(); i += 7)
    y.data<float>()[i] = 0; // exactly zero: no gradient
  Both r =
      runBoth("relu_grad", {}, {randomBf16({4, 32, 26, 26}, 1), toBf16(y)});
  EXPECT_EQ(r.cpuImpl, "fast");
  expectSameBits(r.ref, r.cpu);
}

TEST(Bf16ReluGrad, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // y: positive, +0, -0, negative, +inf, -inf, NaN; dy passes where y > 0.
  Tensor y =
      toBf16(makeF32({8}, {0.5f, 0.0f, -0.0f, -2.0f, inf, -inf, nan, 1e-30f}));
  Tensor dy =
      toBf16(makeF32({8}, {nan, 1.0f, 2.0f, 3.0f, -inf, 5.0f, 6.0f, 7.5f}));
  // A signaling NaN pattern: the reference's conversions quiet it.
  dy.data<uint16_t>()[4] = 0x7f81;
  Both r = runBoth("relu_grad", {}, {dy, y});
  EXPECT_EQ(r.cpuImpl, "fast");
  expectSameBits(r.ref, r.cpu);
  Tensor got = toF32(r.cpu);
  EXPECT_TRUE(std::isnan(got.data<float>()[0]));
  EXPECT_EQ(got.data<float>()[1], 0.0f);
  EXPECT_EQ(got.data<float>()[3], 0.0f);
  EXPECT_TRUE(std::isnan(got.data<float>()[4]));
  EXPECT_EQ(got.data<float>()[6], 0.0f);
  EXPECT_EQ(got.data<float>()[7], 7.5f);
}

struct PoolCase {
  const char *name;
  AttrMap attrs;
  Shape x;
};

TEST(Bf16MaxPoolGrad, FastMatchesReference) {
  std::vector<PoolCase> cases = {
      {"NchwK3S2Pads",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})},
        {"data_format", stringAttr("NCHW")}},
       {2, 3, 7, 6}},
      {"NhwcOverlappingAsymmetricPads",
       {{"kernel", intsAttr({3, 2})}, {"pads", intsAttr({0, 2, 1, 0})}},
       {2, 5, 6, 3}},
      // ceil_mode as autodiff gives it to max_pool_grad, which takes
      // explicit pads only: the bottom and right padded by the extra window.
      {"NhwcK2S2CeilModePads",
       {{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({0, 1, 0, 1})}},
       {1, 5, 7, 4}},
      {"MnistNchw",
       {{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"data_format", stringAttr("NCHW")}},
       {4, 64, 24, 24}},
      {"ResNetNhwcK3S2",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {2, 16, 16, 64}},
      // Tiling windows (the write-once path), with an edge remainder.
      {"MnistNhwcTiled",
       {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}},
       {4, 24, 24, 64}},
      {"NchwTiledRemainder",
       {{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"data_format", stringAttr("NCHW")}},
       {2, 3, 5, 7}},
      {"NchwTiledRowRemainder",
       {{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"data_format", stringAttr("NCHW")}},
       {2, 3, 5, 6}},
      {"NhwcTiledK3Remainder",
       {{"kernel", intsAttr({3, 3})}, {"strides", intsAttr({3, 3})}},
       {2, 10, 11, 8}},
      // Streamed by rows: rows no window reaches, windows sharing two rows.
      {"NhwcK2S3Gaps",
       {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({3, 3})}},
       {2, 8, 9, 5}},
      {"NhwcK3S1Pads",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({1, 1})},
        {"pads", intsAttr({1, 2, 2, 1})}},
       {1, 6, 7, 16}},
  };
  uint32_t seed = 50;
  for (const PoolCase &c : cases) {
    SCOPED_TRACE(c.name);
    // Rounded values make ties common (the first maximum wins).
    Tensor x = randomF32(c.x, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i)
      x.data<float>()[i] = std::round(x.data<float>()[i] * 4);
    std::vector<Shape> y = resultShapes("max_pool", c.attrs, {x});
    ASSERT_EQ(y.size(), 1u);
    Both r = runBoth("max_pool_grad", c.attrs,
                     {toBf16(x), randomBf16(y[0], seed++)});
    EXPECT_EQ(r.cpuImpl, "fast");
    // Overlapping windows sum several dy in f32 (the reference in double)
    // before the one rounding to bf16: at most one bf16 step apart.
    expectCloseBf16(r.ref, r.cpu, 1.0f / 128);
  }
}

// Tiling NHWC windows write dy's bits to the first maximum (AVX-512 loops
// for 16, 32 and 64 channels where the CPU has them): NaNs in x (the last
// wins), signed zeros (equal: the first wins), a signaling NaN in dy
// quieted as the reference's conversion does, the same bits as the
// reference.
// Overlapping and padded NHWC windows with channels a multiple of 16 (the
// ResNet stem's 3x3 stride-2 pool) run 16 channels a vector
// (PoolGradBf16.cpp): the same bits as the generic rows loop
// (GOPT_MAX_POOL_GRAD_AVX512=0), NaNs, ties and signed zeros included, and
// within a bf16 step of the reference.
TEST(Bf16MaxPoolGrad, OverlappingNhwcVectorsSameBitsAsRows) {
  uint32_t seed = 90;
  struct Case {
    AttrMap attrs;
    Shape x;
  };
  std::vector<Case> cases = {
      {{{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {2, 11, 12, 64}},
      {{{"kernel", intsAttr({3, 2})},
        {"strides", intsAttr({1, 2})},
        {"pads", intsAttr({0, 2, 1, 0})}},
       {2, 7, 9, 32}},
      {{{"kernel", intsAttr({2, 3})},
        {"strides", intsAttr({3, 1})},
        {"pads", intsAttr({1, 0, 0, 1})}},
       {1, 8, 6, 16}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.x[3]);
    Tensor x = randomF32(c.x, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      float v = std::round(x.data<float>()[i] * 4);
      x.data<float>()[i] = i % 7 ? v : (i % 3 ? NAN : -0.0f);
    }
    std::vector<Shape> y = resultShapes("max_pool", c.attrs, {x});
    ASSERT_EQ(y.size(), 1u);
    Tensor dy = randomBf16(y[0], seed++);
    dy.data<uint16_t>()[1] = 0x7f81; // signaling NaN
    dy.data<uint16_t>()[2] = 0xffc0; // negative quiet NaN
    Both vectors = runBoth("max_pool_grad", c.attrs, {toBf16(x), dy});
    setenv("GOPT_MAX_POOL_GRAD_AVX512", "0", 1);
    Both rows = runBoth("max_pool_grad", c.attrs, {toBf16(x), dy});
    unsetenv("GOPT_MAX_POOL_GRAD_AVX512");
    EXPECT_EQ(vectors.cpuImpl, "fast");
    expectSameBits(rows.cpu, vectors.cpu);
  }
}

TEST(Bf16MaxPoolGrad, TiledNhwcSpecialValuesSameBits) {
  uint32_t seed = 70;
  for (int64_t channels : {16, 32, 64}) {
    SCOPED_TRACE(channels);
    AttrMap attrs = {{"kernel", intsAttr({2, 2})},
                     {"strides", intsAttr({2, 2})}};
    Tensor x = randomF32({2, 6, 5, channels}, seed++);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      float v = std::round(x.data<float>()[i] * 4);
      x.data<float>()[i] = i % 5 ? v : (i % 3 ? NAN : -0.0f);
    }
    std::vector<Shape> y = resultShapes("max_pool", attrs, {x});
    ASSERT_EQ(y.size(), 1u);
    Tensor dy = randomBf16(y[0], seed++);
    dy.data<uint16_t>()[1] = 0x7f81; // signaling NaN
    dy.data<uint16_t>()[2] = 0xffc0; // negative quiet NaN
    Both r = runBoth("max_pool_grad", attrs, {toBf16(x), dy});
    EXPECT_EQ(r.cpuImpl, "fast");
    expectSameBits(r.ref, r.cpu);
  }
}

TEST(Bf16AvgPoolGrad, FastMatchesReference) {
  std::vector<PoolCase> cases = {
      {"NchwK3S2PadsIncludePad",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})},
        {"count_include_pad", boolAttr(true)},
        {"data_format", stringAttr("NCHW")}},
       {2, 8, 9, 8}},
      {"NhwcSameCeilMode",
       {{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"padding", stringAttr("SAME")},
        {"ceil_mode", boolAttr(true)}},
       {2, 7, 7, 16}},
  };
  uint32_t seed = 150;
  for (const PoolCase &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = randomF32(c.x, seed++);
    std::vector<Shape> y = resultShapes("avg_pool", c.attrs, {x});
    ASSERT_EQ(y.size(), 1u);
    Both r = runBoth("avg_pool_grad", c.attrs,
                     {toBf16(x), randomBf16(y[0], seed++)});
    EXPECT_EQ(r.cpuImpl, "fast");
    // Shares summed in f32 (the reference in double), one rounding.
    expectCloseBf16(r.ref, r.cpu, 1.0f / 128);
  }
}

TEST(Bf16Reduce, FastMatchesReference) {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
  };
  std::vector<Case> cases = {
      {{8, 64, 24, 24}, {0, 2, 3}}, // NCHW conv bias gradient
      {{64, 128}, {0}},             // dense bias gradient
      {{4, 9, 9, 32}, {0, 1, 2}},   // NHWC
      {{3, 5, 7}, {}},              // everything
  };
  uint32_t seed = 1;
  for (const Case &c : cases)
    for (const char *kind : {"reduce_sum", "reduce_mean"}) {
      SCOPED_TRACE(std::string(kind) + " " + shapeToString(c.x));
      Both r = runBoth(kind, {{"axes", intsAttr(c.axes)}},
                       {randomBf16(c.x, seed++)});
      EXPECT_EQ(r.cpuImpl, "fast");
      // Sums in double either way, in another order; one rounding.
      expectCloseBf16(r.ref, r.cpu, 1.0f / 128);
    }
}

} // namespace
