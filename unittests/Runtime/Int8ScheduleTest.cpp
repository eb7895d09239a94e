//===- Int8ScheduleTest.cpp - Static int8 plans on backend "cpu" ----------===//
//
// Plans in the quantize/dequantize form of --gopt-quantize=mode=static must
// compute on "cpu" what the reference kernels compute: the fast quantize
// and dequantize bit for bit, the int8 oneDNN chains within int8 rounding
// (oneDNN rounds its s32 -> s8 conversion itself: a step now and then), and
// everything the int8 patterns do not match exactly as before.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "gopt/runtime/CpuInfo.h"

#include <cmath>
#include <limits>
#include <set>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;
const DType I8 = DType::kI8;

// The int8 conv/matmul chains run on oneDNN only where it accumulates
// int8 exactly (VNNI or AMX); elsewhere Int8Schedule.WithoutInt8DotProduct*
// checks the f32 fallback.
#define SKIP_WITHOUT_INT8_DOT_PRODUCT()                                        \
  if (!cpuInt8DotProduct())                                                    \
  GTEST_SKIP() << "no VNNI or AMX here (oneDNN uses " << cpuIsaName()          \
               << "): int8 convs and matmuls run as f32, see "                 \
                  "WithoutInt8DotProductConvAndMatmulRunAsF32"

std::string implementationOf(const RunResult &r, const std::string &kind) {
  for (const OpProfile &p : r.profiles)
    if (p.kind == kind)
      return p.implementation;
  return "(no " + kind + " step)";
}

void expectSameBytes(const Tensor &a, const Tensor &b) {
  ASSERT_EQ(a.byteSize(), b.byteSize());
  const uint8_t *pa = static_cast<const uint8_t *>(a.data());
  const uint8_t *pb = static_cast<const uint8_t *>(b.data());
  int bad = 0;
  for (size_t i = 0; i < a.byteSize() && bad < 5; ++i)
    if (pa[i] != pb[i]) {
      ADD_FAILURE() << "byte " << i << ": " << int(pa[i])
                    << " != " << int(pb[i]);
      ++bad;
    }
}

// Dequantized results agree when every element is within `steps`
// quantization steps of `step`; and the values must not be degenerate.
void expectWithinSteps(const Tensor &ref, const Tensor &cpu, float step,
                       float steps = 2.0f) {
  ASSERT_EQ(ref.shape(), cpu.shape());
  ASSERT_EQ(ref.dtype(), F32);
  std::set<float> distinct;
  int bad = 0;
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    float a = ref.data<float>()[i], b = cpu.data<float>()[i];
    distinct.insert(a);
    if (!(std::abs(a - b) <= steps * step * 1.001f) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": reference " << a << ", cpu " << b
                    << " (step " << step << ")";
  }
  EXPECT_GT(distinct.size(), 20u) << "a degenerate test: few distinct values";
}

//===----------------------------------------------------------------------===//
// Fast quantize / dequantize
//===----------------------------------------------------------------------===//

// Runs a one-op quantize/dequantize with constant scales on both backends;
// checks that "cpu" ran the fast kernel and returns {reference, cpu}.
std::pair<Tensor, Tensor> runQuantization(const std::string &kind,
                                          const Tensor &x, const Tensor &scales,
                                          int64_t axis) {
  PlanBuilder b(kind);
  int in = b.addInput("x", x.dtype(), x.shape());
  int s = b.addConstant("s", scales);
  int y = b.addOutput("y", kind == "quantize" ? I8 : F32, x.shape());
  b.addOp(kind, "op", {in, s}, {y}, {{"axis", intAttr(axis)}});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  RunResult ref = runPlan(*plan, "reference", {x});
  RunResult cpu = runPlan(*plan, "cpu", {x});
  if (ref.outputs.empty() || cpu.outputs.empty()) {
    ADD_FAILURE() << "no results";
    return {x, x};
  }
  EXPECT_EQ(implementationOf(cpu, kind), "fast");
  return {ref.outputs[0], cpu.outputs[0]};
}

TEST(Int8FastKernels, QuantizeRoundsHalfToEvenSaturatesAndZeroesNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // {x, q} at scale 0.5: x / 0.5 = 2x.
  const std::vector<std::pair<float, int8_t>> cases = {
      {0.25f, 0},   {0.75f, 2}, {1.25f, 2},     {-0.25f, 0},     {-0.75f, -2},
      {-1.25f, -2}, {0.26f, 1}, {63.25f, 126},  {63.75f, 127},   {64.0f, 127},
      {1e9f, 127},  {inf, 127}, {-64.0f, -128}, {-64.25f, -128}, {-1e9f, -128},
      {-inf, -128}, {nan, 0},   {-nan, 0},      {-0.0f, 0},      {1.0f, 2}};
  // Odd-sized and above the parallel threshold: both threads and the
  // vector loops' tails run.
  const int64_t n = 100003;
  Tensor x = Tensor::allocate(F32, {n});
  for (int64_t i = 0; i < n; ++i)
    x.data<float>()[i] = cases[i % cases.size()].first;
  auto [ref, cpu] = runQuantization("quantize", x, makeF32({1}, {0.5f}), 0);
  for (int64_t i = 0; i < n; ++i) {
    int8_t expected = cases[i % cases.size()].second;
    if (cpu.data<int8_t>()[i] != expected ||
        ref.data<int8_t>()[i] != expected) {
      ADD_FAILURE() << "x " << x.data<float>()[i] << " -> cpu "
                    << int(cpu.data<int8_t>()[i]) << ", reference "
                    << int(ref.data<int8_t>()[i]) << ", expected "
                    << int(expected);
      break;
    }
  }
  // Random values around the rounding boundaries, at an inexact scale.
  Tensor r = randomF32({3, 33335}, 5);
  for (int64_t i = 0; i < r.numElements(); ++i)
    r.data<float>()[i] *= 1.3f;
  auto [ref2, cpu2] = runQuantization("quantize", r, makeF32({1}, {0.01f}), 0);
  expectSameBytes(ref2, cpu2);
}

TEST(Int8FastKernels, PerChannelQuantizeAndDequantizeMatchBitForBit) {
  Tensor x = randomF32({4, 6, 35, 37}, 1);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] *= 3.0f; // some saturate
  for (int64_t axis : {0, 1, 3, -1}) {
    int64_t c = x.shape()[axis < 0 ? 3 : axis];
    Tensor scales = Tensor::allocate(F32, {c});
    for (int64_t i = 0; i < c; ++i)
      scales.data<float>()[i] = 0.01f + 0.003f * i;
    auto [refQ, cpuQ] = runQuantization("quantize", x, scales, axis);
    expectSameBytes(refQ, cpuQ);
    auto [refD, cpuD] = runQuantization("dequantize", cpuQ, scales, axis);
    expectSameBytes(refD, cpuD);
    // A channel's values come back on its own grid.
    int64_t last = x.numElements() - 1;
    EXPECT_EQ(cpuD.data<float>()[last],
              float(cpuQ.data<int8_t>()[last]) * scales.data<float>()[c - 1]);
  }
}

TEST(Int8FastKernels, QuantizeRejectsANonPositiveScale) {
  PlanBuilder b("bad");
  int x = b.addInput("x", F32, {4});
  int s = b.addInput("s", F32, {1});
  int y = b.addOutput("y", I8, {4});
  b.addOp("quantize", "q", {x, s}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok());
  RunResult cpu = runPlan(*plan, "cpu", {randomF32({4}, 1), makeF32({1}, {0})},
                          /*batch=*/1, /*expectSuccess=*/false);
  EXPECT_FALSE(cpu.status.ok());
  EXPECT_NE(cpu.status.toString().find("quantize scale 0 is 0"),
            std::string::npos)
      << cpu.status.toString();
}

//===----------------------------------------------------------------------===//
// Q/DQ plans as --gopt-quantize writes them
//===----------------------------------------------------------------------===//

class QdqPlan {
public:
  PlanBuilder b{"qdq"};

  int scale(float s) {
    return b.addConstant("s" + std::to_string(n_++), makeF32({1}, {s}));
  }
  // x' = dequantize(quantize(x, s), s); `q` receives the int8 tensor.
  int qdq(int x, const Shape &shape, float s, int *q = nullptr) {
    int sc = scale(s);
    int qt = b.addIntermediate("q" + std::to_string(n_++), I8, shape);
    b.addOp("quantize", "quantize" + std::to_string(n_++), {x, sc}, {qt});
    int dq = value(shape);
    b.addOp("dequantize", "dequantize" + std::to_string(n_++), {qt, sc}, {dq});
    if (q)
      *q = qt;
    return dq;
  }
  // A constant int8 weight of `shape` quantized with one scale per index
  // along `axis` (max |w| / 127), dequantized by an op.
  int weight(const Shape &shape, int64_t axis, uint32_t seed) {
    Tensor w = randomF32(shape, seed);
    int64_t c = shape[axis], inner = 1;
    for (size_t d = axis + 1; d < shape.size(); ++d)
      inner *= shape[d];
    Tensor scales = Tensor::allocate(F32, {c});
    Tensor q = Tensor::allocate(I8, shape);
    std::vector<float> maxAbs(c, 0);
    for (int64_t i = 0; i < w.numElements(); ++i)
      maxAbs[i / inner % c] =
          std::max(maxAbs[i / inner % c], std::abs(w.data<float>()[i]));
    for (int64_t i = 0; i < c; ++i) // channel i spans (i + 1) / c of [-1, 1]
      scales.data<float>()[i] = maxAbs[i] / 127 * 0.2f * (i + 1) / c;
    for (int64_t i = 0; i < w.numElements(); ++i)
      q.data<int8_t>()[i] = static_cast<int8_t>(
          std::nearbyint(w.data<float>()[i] / maxAbs[i / inner % c] * 127));
    int qt = b.addConstant("wq" + std::to_string(n_++), q);
    int st = b.addConstant("ws" + std::to_string(n_++), scales);
    int dq = value(shape);
    b.addOp("dequantize", "wdq" + std::to_string(n_++), {qt, st}, {dq},
            {{"axis", intAttr(axis)}});
    return dq;
  }
  int value(const Shape &shape) {
    return b.addIntermediate("v" + std::to_string(n_++), F32, shape);
  }
  int conv(int x, int w, int bias, const Shape &out,
           const char *activation = "none") {
    int y = value(out);
    std::vector<int> ins = {x, w};
    if (bias >= 0)
      ins.push_back(bias);
    b.addOp("conv2d", "conv" + std::to_string(n_++), ins, {y},
            {{"data_format", stringAttr("NCHW")},
             {"filter_format", stringAttr("OIHW")},
             {"pads", intsAttr({1, 1, 1, 1})},
             {"activation", stringAttr(activation)}});
    return y;
  }
  int unary(const std::string &kind, int x, const Shape &shape,
            const AttrMap &attrs = {}) {
    int y = value(shape);
    b.addOp(kind, kind + std::to_string(n_++), {x}, {y}, attrs);
    return y;
  }
  int bias(int64_t c, uint32_t seed) {
    return b.addConstant("b" + std::to_string(n_++), randomF32({c}, seed));
  }
  Plan build() {
    auto plan = b.build();
    EXPECT_TRUE(plan.ok()) << plan.status().toString();
    return *plan;
  }

private:
  int n_ = 0;
};

// Activation scales: x in [-1, 1]; conv results of 16 channels x 3 x 3
// spread over about [-3, 3].
constexpr float kInScale = 1.0f / 127, kOutScale = 0.025f;

// x -> Q/DQ -> conv(Q/DQ'd weights, bias) [-> unary op] -> Q/DQ -> y.
Plan convPlan(const char *activation, const std::string &after = "",
              const AttrMap &afterAttrs = {}) {
  QdqPlan p;
  Shape s = {-1, 16, 10, 9};
  int x = p.b.addInput("x", F32, s);
  int c = p.conv(p.qdq(x, s, kInScale), p.weight({24, 16, 3, 3}, 0, 2),
                 p.bias(24, 3), {-1, 24, 10, 9}, activation);
  if (!after.empty())
    c = p.unary(after, c, {-1, 24, 10, 9}, afterAttrs);
  int y = p.b.addOutput("y", F32, {-1, 24, 10, 9});
  int q = p.scale(kOutScale);
  int qy = p.b.addIntermediate("qy", I8, {-1, 24, 10, 9});
  p.b.addOp("quantize", "quantize_y", {c, q}, {qy});
  p.b.addOp("dequantize", "dequantize_y", {qy, q}, {y});
  return p.build();
}

TEST(Int8Schedule, ConvReadsInt8AndWritesTheQuantizedResult) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  Plan plan = convPlan("none");
  std::vector<Tensor> in = {randomF32({3, 16, 10, 9}, 1)};
  RunResult ref = runPlan(plan, "reference", in, 3);
  RunResult cpu = runPlan(plan, "cpu", in, 3);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(implementationOf(cpu, "conv2d+quantize"), "onednn");
  EXPECT_EQ(k.count("conv2d"), 0u);
  // Only the input's quantize and the output's dequantize run; the
  // weight's dequantize and the source's never do. The input's quantize
  // writes straight into the conv's layout (a oneDNN reorder).
  EXPECT_EQ(k.count("quantize"), 1u);
  EXPECT_EQ(k.count("dequantize"), 1u);
  EXPECT_EQ(implementationOf(cpu, "quantize"), "onednn");
  EXPECT_EQ(implementationOf(cpu, "dequantize"), "fast");
}

TEST(Int8Schedule, MaxPoolOfAQuantizedTensorPoolsTheInt8Values) {
  // conv+relu -> Q -> DQ -> max_pool -> Q (same scale) -> DQ -> conv: the
  // pool reads the conv's int8 result in its layout and writes the next
  // quantize's tensor; max commutes with scaling and rounding, so the
  // result is exactly the reference's. With another scale it is not
  // fused.
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  for (float poolScale : {0.05f, 0.04f}) {
    QdqPlan p;
    Shape xs = {-1, 16, 8, 8}, ps = {-1, 16, 4, 4};
    int x = p.b.addInput("x", F32, xs);
    int c = p.conv(p.qdq(x, xs, 0.01f), p.weight({16, 16, 3, 3}, 0, 5), -1, xs,
                   "relu");
    int pooled = p.value(ps);
    p.b.addOp("max_pool", "pool", {p.qdq(c, xs, 0.05f)}, {pooled},
              {{"data_format", stringAttr("NCHW")},
               {"kernel", intsAttr({2, 2})},
               {"strides", intsAttr({2, 2})}});
    int q;
    p.qdq(pooled, ps, poolScale, &q);
    int y = p.b.addOutput("y", F32, ps);
    p.b.addOp("dequantize", "out", {q, p.scale(poolScale)}, {y});
    auto plan = p.b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    std::vector<Tensor> in = {randomF32({2, 16, 8, 8}, 6)};
    RunResult ref = runPlan(*plan, "reference", in, 2);
    RunResult cpu = runPlan(*plan, "cpu", in, 2);
    ASSERT_EQ(cpu.outputs.size(), 1u);
    ASSERT_EQ(ref.outputs.size(), 1u);
    expectWithinSteps(ref.outputs[0], cpu.outputs[0], poolScale);
    std::multiset<std::string> k = kinds(cpu);
    if (poolScale == 0.05f) {
      EXPECT_EQ(implementationOf(cpu, "max_pool+quantize"), "onednn");
      EXPECT_EQ(k.count("max_pool"), 0u);
    } else {
      EXPECT_EQ(k.count("max_pool+quantize"), 0u);
      EXPECT_EQ(k.count("max_pool"), 1u);
    }
  }
}

TEST(Int8Schedule, ActivationsFuseIntoTheInt8Conv) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  std::vector<Tensor> in = {randomF32({2, 16, 10, 9}, 4)};
  struct Case {
    Plan plan;
    std::string kind;
  };
  std::vector<Case> cases = {
      {convPlan("relu"), "conv2d+quantize"}, // the conv's own attribute
      {convPlan("none", "relu"), "conv2d+relu+quantize"},
      {convPlan("none", "relu6"), "conv2d+relu6+quantize"},
      // clip's bounds are in real values; [-0.5, 1.5] keeps a signed result
      {convPlan("none", "clip",
                {{"min", floatAttr(-0.5)}, {"max", floatAttr(1.5)}}),
       "conv2d+clip+quantize"},
      {convPlan("none", "clip",
                {{"min", floatAttr(0.25)}, {"max", floatAttr(2)}}),
       "conv2d+clip+quantize"}};
  for (const Case &c : cases) {
    RunResult ref = runPlan(c.plan, "reference", in, 2);
    RunResult cpu = runPlan(c.plan, "cpu", in, 2);
    ASSERT_EQ(cpu.outputs.size(), 1u);
    ASSERT_EQ(ref.outputs.size(), 1u);
    EXPECT_EQ(implementationOf(cpu, c.kind), "onednn") << c.kind;
    expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale);
  }
}

// A ResNet basic block as --gopt-quantize writes it: x -> Q/DQ -> conv+relu
// -> Q/DQ -> conv -> Q/DQ -> add(the block's dequantized input) -> relu
// [-> Q/DQ] -> y, then (with `second`) a second block whose sum ends in f32.
Plan residualPlan(bool second) {
  QdqPlan p;
  Shape s = {-1, 16, 8, 8};
  int x = p.b.addInput("x", F32, s);
  int xin = p.qdq(x, s, kInScale);
  int c1 =
      p.conv(xin, p.weight({16, 16, 3, 3}, 0, 5), p.bias(16, 6), s, "relu");
  int c2 = p.conv(p.qdq(c1, s, 0.02f), p.weight({16, 16, 3, 3}, 0, 7),
                  p.bias(16, 8), s);
  int a = p.value(s);
  p.b.addOp("add", "add1", {p.qdq(c2, s, 0.03f), xin}, {a});
  int r = p.unary("relu", a, s);
  int out = p.qdq(r, s, kOutScale);
  if (second) {
    int c3 = p.conv(out, p.weight({16, 16, 3, 3}, 0, 9), p.bias(16, 10), s);
    int a2 = p.value(s);
    p.b.addOp("add", "add2", {out, p.qdq(c3, s, 0.03f)}, {a2});
    out = p.unary("relu", a2, s);
  }
  int y = p.b.addOutput("y", F32, s);
  p.b.addOp("identity", "result", {out}, {y});
  return p.build();
}

TEST(Int8Schedule, ResidualBlockIsOneInt8ConvWithASumPostOp) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  std::vector<Tensor> in = {randomF32({2, 16, 8, 8}, 11)};
  Plan plan = residualPlan(false);
  RunResult ref = runPlan(plan, "reference", in, 2);
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale);
  EXPECT_EQ(
      implementationOf(cpu, "conv2d+quantize+dequantize+add+relu+quantize"),
      "onednn");
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("add"), 0u);
  EXPECT_EQ(k.count("relu"), 0u);
  EXPECT_EQ(k.count("conv2d+quantize"), 1u);
  EXPECT_EQ(k.count("quantize"), 1u) << "the input's only";
}

TEST(Int8Schedule, ResidualSumIntoAnF32Destination) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  // The second block ends in f32 (as ResNet's last block before its
  // pooling): the conv sums the dequantized residual in f32.
  std::vector<Tensor> in = {randomF32({2, 16, 8, 8}, 12)};
  Plan plan = residualPlan(true);
  RunResult ref = runPlan(plan, "reference", in, 2);
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  // The f32 result adds a step of the residual and of the requantized conv.
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], 0.03f, 2.0f);
  EXPECT_EQ(implementationOf(cpu, "conv2d+quantize+dequantize+add+relu"),
            "onednn");
  EXPECT_EQ(kinds(cpu).count("add"), 0u);
}

// x [B, 64] -> Q/DQ -> matmul(B = Q/DQ'd weight) [-> Q/DQ] -> y.
Plan matmulPlan(bool transposeB, bool quantizeResult) {
  QdqPlan p;
  int x = p.b.addInput("x", F32, {-1, 64});
  Shape wShape = transposeB ? Shape{40, 64} : Shape{64, 40};
  int w = p.weight(wShape, transposeB ? 0 : 1, 13);
  int m = p.value({-1, 40});
  p.b.addOp("matmul", "fc", {p.qdq(x, {-1, 64}, kInScale), w}, {m},
            {{"transpose_b", boolAttr(transposeB)}});
  int y = p.b.addOutput("y", F32, {-1, 40});
  int out = quantizeResult ? p.qdq(m, {-1, 40}, kOutScale) : m;
  p.b.addOp("identity", "result", {out}, {y});
  return p.build();
}

TEST(Int8Schedule, MatmulWithAConstantInt8Weight) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  std::vector<Tensor> in = {randomF32({5, 64}, 14)};
  for (bool transposeB : {true, false}) {
    Plan plan = matmulPlan(transposeB, true);
    RunResult ref = runPlan(plan, "reference", in, 5);
    RunResult cpu = runPlan(plan, "cpu", in, 5);
    ASSERT_EQ(cpu.outputs.size(), 1u);
    ASSERT_EQ(ref.outputs.size(), 1u);
    expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale);
    EXPECT_EQ(implementationOf(cpu, "matmul+quantize"), "onednn");
    EXPECT_EQ(kinds(cpu).count("quantize"), 1u);
  }
  // Without a quantize after it the result is f32: s32 products scaled
  // exactly, so only the summation order differs from the reference.
  Plan plan = matmulPlan(false, false);
  RunResult ref = runPlan(plan, "reference", in, 5);
  RunResult cpu = runPlan(plan, "cpu", in, 5);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  EXPECT_LT(maxAbsDiff(ref.outputs[0], cpu.outputs[0]), 1e-4f);
  EXPECT_EQ(implementationOf(cpu, "matmul"), "onednn");
  EXPECT_EQ(kinds(cpu).count("dequantize"), 0u);
}

//===----------------------------------------------------------------------===//
// What the int8 patterns do not match runs as before
//===----------------------------------------------------------------------===//

TEST(Int8Schedule, WeightOnlyInt8IsDequantizedOnceWhenTheSessionIsBuilt) {
  // conv(x, dequantize(constant int8 W, per-channel scales)) in f32 (the
  // form of --gopt-quantize-weights): the dequantize runs once, not every
  // run, and the conv sees a constant weight; results match the reference.
  PlanBuilder b("weight-only");
  Shape s = {-1, 8, 5, 5};
  int x = b.addInput("x", F32, s);
  Tensor wq = Tensor::allocate(I8, {8, 8, 3, 3});
  for (int64_t i = 0; i < wq.numElements(); ++i)
    wq.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  Tensor scales = Tensor::allocate(F32, {8});
  for (int i = 0; i < 8; ++i)
    scales.data<float>()[i] = 0.001f * (i + 1);
  int wi = b.addConstant("w/int8", wq);
  int ws = b.addConstant("w/scales", scales);
  int wf = b.addIntermediate("w", F32, {8, 8, 3, 3});
  b.addOp("dequantize", "w/dequantize", {wi, ws}, {wf}, {{"axis", intAttr(0)}});
  int y = b.addOutput("y", F32, s);
  b.addOp("conv2d", "conv", {x, wf}, {y},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({1, 1, 1, 1})}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({2, 8, 5, 5}, 3)};
  RunResult ref = runPlan(*plan, "reference", in, 2);
  RunResult cpu = runPlan(*plan, "cpu", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("dequantize"), 0u) << "the weight is dequantized per run";
  EXPECT_EQ(implementationOf(cpu, "conv2d"), "onednn");
  const float *a = ref.outputs[0].data<float>();
  const float *c = cpu.outputs[0].data<float>();
  for (int64_t i = 0; i < ref.outputs[0].numElements(); ++i)
    ASSERT_NEAR(a[i], c[i], 1e-5f + 1e-4f * std::abs(a[i])) << "element " << i;
}

TEST(Int8Schedule, VariableWeightsAndPerChannelActivationScalesRunInF32) {
  // conv(dequantize(q_x, per-channel scales), dequantize(w, s) with w an
  // input): neither is an int8 pattern, so the dequantizes run and the conv
  // computes in f32, as the reference does.
  PlanBuilder b("unmatched");
  Shape s = {-1, 16, 6, 6};
  int x = b.addInput("x", I8, s);
  int w = b.addInput("w", I8, {16, 16, 3, 3});
  Tensor channelScales = Tensor::allocate(F32, {16});
  for (int i = 0; i < 16; ++i)
    channelScales.data<float>()[i] = 0.01f * (i + 1);
  int xs = b.addConstant("xs", channelScales);
  int ws = b.addConstant("ws", makeF32({1}, {0.02f}));
  int xf = b.addIntermediate("xf", F32, s);
  b.addOp("dequantize", "dq_x", {x, xs}, {xf}, {{"axis", intAttr(1)}});
  int wf = b.addIntermediate("wf", F32, {16, 16, 3, 3});
  b.addOp("dequantize", "dq_w", {w, ws}, {wf});
  int c = b.addIntermediate("c", F32, s);
  b.addOp("conv2d", "conv", {xf, wf}, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({1, 1, 1, 1})}});
  int qs = b.addConstant("qs", makeF32({1}, {0.05f}));
  int q = b.addIntermediate("q", I8, s);
  b.addOp("quantize", "q_c", {c, qs}, {q});
  int y = b.addOutput("y", F32, s);
  b.addOp("dequantize", "dq_c", {q, qs}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto randomI8 = [](const Shape &shape, uint32_t seed) {
    Tensor f = randomF32(shape, seed);
    Tensor t = Tensor::allocate(I8, shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data<int8_t>()[i] = static_cast<int8_t>(f.data<float>()[i] * 127);
    return t;
  };
  std::vector<Tensor> in = {randomI8({2, 16, 6, 6}, 1),
                            randomI8({16, 16, 3, 3}, 2)};
  RunResult ref = runPlan(*plan, "reference", in, 2);
  RunResult cpu = runPlan(*plan, "cpu", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  // f32 convolutions in another summation order: a rare 1-step difference.
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], 0.05f, 1.0f);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("conv2d"), 1u);
  EXPECT_EQ(implementationOf(cpu, "conv2d"), "onednn");
  EXPECT_EQ(k.count("dequantize"), 3u);
  EXPECT_EQ(k.count("quantize"), 1u);
  EXPECT_EQ(implementationOf(cpu, "dequantize"), "fast");
}

TEST(Int8Schedule, AQuantizedTensorReadTwiceStaysAvailable) {
  SKIP_WITHOUT_INT8_DOT_PRODUCT();
  // The conv's dequantized result is both a graph output's source and the
  // next conv's int8 input; the input's dequantized value is also read by
  // an f32 mul. Each f32 reader gets its dequantize.
  QdqPlan p;
  Shape s = {-1, 16, 8, 8};
  int x = p.b.addInput("x", F32, s);
  int xin = p.qdq(x, s, kInScale);
  int c1 = p.conv(xin, p.weight({16, 16, 3, 3}, 0, 21), -1, s, "relu");
  int d1 = p.qdq(c1, s, 0.02f);
  int c2 = p.conv(d1, p.weight({16, 16, 3, 3}, 0, 22), -1, s);
  int d2 = p.qdq(c2, s, kOutScale);
  int m = p.value(s);
  p.b.addOp("mul", "mul", {d2, xin}, {m});
  int y1 = p.b.addOutput("y1", F32, s), y2 = p.b.addOutput("y2", F32, s);
  p.b.addOp("identity", "out1", {m}, {y1});
  p.b.addOp("identity", "out2", {d1}, {y2});
  Plan plan = p.build();
  std::vector<Tensor> in = {randomF32({2, 16, 8, 8}, 23)};
  RunResult ref = runPlan(plan, "reference", in, 2);
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 2u);
  ASSERT_EQ(ref.outputs.size(), 2u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale);
  expectWithinSteps(ref.outputs[1], cpu.outputs[1], 0.02f, 1.0f);
  EXPECT_EQ(kinds(cpu).count("conv2d+quantize"), 2u);
}

TEST(Int8Schedule, WithoutInt8DotProductConvAndMatmulRunAsF32) {
  // Where oneDNN would sum int8 products in saturating s16 (no VNNI/AMX),
  // the Q/DQ chains run as written: f32 convs and matmuls on dequantized
  // values, the reference's computation, so results agree to a rounding
  // step at most. With VNNI/AMX the fused int8 kernels run instead.
  bool fused = cpuInt8DotProduct();
  std::vector<Tensor> convIn = {randomF32({3, 16, 10, 9}, 1)};
  Plan conv = convPlan("relu");
  RunResult ref = runPlan(conv, "reference", convIn, 3);
  RunResult cpu = runPlan(conv, "cpu", convIn, 3);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale,
                    fused ? 2.0f : 1.0f);
  EXPECT_EQ(kinds(cpu).count("conv2d+quantize"), fused ? 1u : 0u);

  std::vector<Tensor> residualIn = {randomF32({2, 16, 8, 8}, 12)};
  Plan residual = residualPlan(true);
  ref = runPlan(residual, "reference", residualIn, 2);
  cpu = runPlan(residual, "cpu", residualIn, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], 0.03f, fused ? 2.0f : 1.0f);
  EXPECT_EQ(kinds(cpu).count("add"), fused ? 0u : 2u);

  std::vector<Tensor> matmulIn = {randomF32({5, 64}, 14)};
  Plan matmul = matmulPlan(true, true);
  ref = runPlan(matmul, "reference", matmulIn, 5);
  cpu = runPlan(matmul, "cpu", matmulIn, 5);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  expectWithinSteps(ref.outputs[0], cpu.outputs[0], kOutScale,
                    fused ? 2.0f : 1.0f);
  EXPECT_EQ(kinds(cpu).count("matmul+quantize"), fused ? 1u : 0u);
}

} // namespace
