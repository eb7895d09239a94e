//===- ReluGradBiasTest.cpp - add + relu_grad + bias sum as one step ------===//
//
// The CPU schedule's fused relu gradient (ReluGradBias.cpp) against the
// same plan with GOPT_RELU_GRAD_BIAS=0 (the add, relu_grad and reduce_sum
// as steps of their own): the same bits, and against the reference
// backend within rounding of the bias sums. And the optimizer updates
// reading a bf16 gradient in place of its cast to f32
// (GOPT_OPTIMIZER_BF16_GRAD): the same bits as cast + update.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

void expectSameBits(const Tensor &a, const Tensor &b, const std::string &what) {
  ASSERT_EQ(a.byteSize(), b.byteSize()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byteSize()), 0) << what;
}

void expectNear(Tensor actual, Tensor expected, double rel,
                const std::string &what) {
  if (actual.dtype() == DType::kBF16)
    actual = toF32(actual), expected = toF32(expected);
  ASSERT_EQ(actual.numElements(), expected.numElements()) << what;
  const float *a = actual.data<float>(), *e = expected.data<float>();
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    if (std::isnan(e[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(e[i])) {
      EXPECT_EQ(a[i], e[i]) << what << " at " << i;
      continue;
    }
    EXPECT_NEAR(a[i], e[i], rel * (1 + std::fabs(e[i]))) << what << " at " << i;
  }
}

// relu_grad(g, y) of an NHWC tensor with g = add(a, b) (or g an input),
// dy read by a reduce_sum over N, H and W (or not) and by another op
// (dy + dy, as a convolution gradient would read it), which keeps dy a
// result the step must write. With `addShared`, the add's result is a
// graph output too: the add is not taken into the step.
TEST(ReluGradBias, FusedStepMatchesSeparateSteps) {
  const DType F32 = DType::kF32, BF16 = DType::kBF16;
  struct Case {
    const char *name;
    Shape shape;
    DType type;
    bool add, bias, addShared;
    const char *kind; // the fused step's kind, or null: none
  };
  std::vector<Case> cases = {
      {"Bf16AddBias",
       {2, 5, 7, 64},
       BF16,
       true,
       true,
       false,
       "add+relu_grad+reduce_sum"},
      {"Bf16AddBiasThreads",
       {4, 14, 14, 64},
       BF16,
       true,
       true,
       false,
       "add+relu_grad+reduce_sum"},
      {"F32AddBias",
       {3, 9, 9, 32},
       F32,
       true,
       true,
       false,
       "add+relu_grad+reduce_sum"},
      {"Bf16Bias",
       {4, 14, 14, 48},
       BF16,
       false,
       true,
       false,
       "relu_grad+reduce_sum"},
      {"Bf16Add", {4, 14, 14, 64}, BF16, true, false, false, "add+relu_grad"},
      {"F32FewRowsManyChannels",
       {1, 1, 1, 40000},
       F32,
       true,
       true,
       false,
       "add+relu_grad+reduce_sum"},
      {"AddShared",
       {2, 6, 6, 16},
       BF16,
       true,
       true,
       true,
       "relu_grad+reduce_sum"},
      {"Neither", {2, 6, 6, 16}, BF16, false, false, false, nullptr},
  };
  uint32_t seed = 1830;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor a = randomF32(c.shape, seed++), b = randomF32(c.shape, seed++),
           y = randomF32(c.shape, seed++);
    float *pa = a.data<float>(), *pb = b.data<float>(), *py = y.data<float>();
    // y's zeros, NaN and infinity; NaN and infinite gradients where y > 0
    // and where it is not; sums that round to ties in bf16.
    py[0] = 0.0f, py[1] = -0.0f, py[2] = NAN, py[3] = INFINITY;
    py[4] = 1.0f, pa[4] = NAN;
    py[5] = -1.0f, pa[5] = NAN;
    py[6] = 1.0f, pa[6] = INFINITY, pb[6] = -INFINITY;
    py[7] = 2.0f, pa[7] = 1.0f, pb[7] = 1.0f / 256;
    if (c.type == BF16)
      a = toBf16(a), b = toBf16(b), y = toBf16(y);
    const int64_t channels = c.shape[3];
    PlanBuilder pb2("relu_grad_bias");
    int ai = pb2.addInput("a", c.type, c.shape);
    int bi = c.add ? pb2.addInput("b", c.type, c.shape) : -1;
    int yi = pb2.addInput("y", c.type, c.shape);
    int g = ai;
    if (c.add) {
      g = c.addShared ? pb2.addOutput("g", c.type, c.shape)
                      : pb2.addIntermediate("g", c.type, c.shape);
      pb2.addOp("add", "skip/grad", {ai, bi}, {g}, {});
    }
    int dy = pb2.addIntermediate("dy", c.type, c.shape);
    pb2.addOp("relu_grad", "relu/grad", {g, yi}, {dy}, {});
    int twice = pb2.addOutput("twice", c.type, c.shape);
    pb2.addOp("add", "reader", {dy, dy}, {twice}, {});
    if (c.bias) {
      int db = pb2.addOutput("db", c.type, {channels});
      pb2.addOp("reduce_sum", "bias/grad", {dy}, {db},
                {{"axes", intsAttr({0, 1, 2})}});
    }
    auto plan = pb2.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    std::vector<Tensor> inputs = {a};
    if (c.add)
      inputs.push_back(b);
    inputs.push_back(y);
    RunResult fused = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_RELU_GRAD_BIAS", "0", 1);
    RunResult separate = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_RELU_GRAD_BIAS");
    RunResult ref = runPlan(*plan, "reference", inputs);
    EXPECT_EQ(kinds(fused).count(c.kind ? c.kind : "-"), c.kind ? 1u : 0u);
    EXPECT_EQ(kinds(separate).count("relu_grad"), 1u);
    ASSERT_EQ(fused.outputs.size(), separate.outputs.size());
    ASSERT_EQ(fused.outputs.size(), ref.outputs.size());
    for (size_t i = 0; i < fused.outputs.size(); ++i) {
      const std::string what = "result " + std::to_string(i);
      expectSameBits(fused.outputs[i], separate.outputs[i], what);
      expectNear(fused.outputs[i], ref.outputs[i], c.type == BF16 ? 1e-2 : 1e-5,
                 what);
    }
  }
}

// ResNet's stem: relu_grad(add(a, b), y) read by a max_pool_grad of
// overlapping windows (3x3, stride 2, padded) and a bias reduce_sum, where
// the fused relu + pool + bias step has no kernel: the add, relu_grad and
// sum still run as one pass, the pool gradient on its own.
TEST(ReluGradBias, OverlappingPoolGradientKeepsThePass) {
  const DType BF16 = DType::kBF16;
  const Shape xShape = {2, 12, 12, 16}, yShape = {2, 6, 6, 16};
  Tensor x = toBf16(randomF32(xShape, 1950)),
         a = toBf16(randomF32(yShape, 1951)),
         b = toBf16(randomF32(yShape, 1952)),
         y = toBf16(randomF32(yShape, 1953));
  PlanBuilder pb("stem");
  int xi = pb.addInput("x", BF16, xShape);
  int ai = pb.addInput("a", BF16, yShape), bi = pb.addInput("b", BF16, yShape);
  int yi = pb.addInput("y", BF16, yShape);
  int g = pb.addIntermediate("g", BF16, yShape);
  int dy = pb.addIntermediate("dy", BF16, yShape);
  int dx = pb.addOutput("dx", BF16, xShape);
  int db = pb.addOutput("db", BF16, {16});
  pb.addOp("add", "skip/grad", {ai, bi}, {g}, {});
  pb.addOp("relu_grad", "relu/grad", {g, yi}, {dy}, {});
  pb.addOp("max_pool_grad", "pool/grad", {xi, dy}, {dx},
           {{"kernel", intsAttr({3, 3})},
            {"strides", intsAttr({2, 2})},
            {"pads", intsAttr({1, 1, 1, 1})}});
  pb.addOp("reduce_sum", "bias/grad", {dy}, {db},
           {{"axes", intsAttr({0, 1, 2})}});
  auto plan = pb.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  RunResult fused = runPlan(*plan, "cpu", {x, a, b, y});
  setenv("GOPT_RELU_GRAD_BIAS", "0", 1);
  RunResult separate = runPlan(*plan, "cpu", {x, a, b, y});
  unsetenv("GOPT_RELU_GRAD_BIAS");
  EXPECT_EQ(kinds(fused).count("add+relu_grad+reduce_sum"), 1u);
  EXPECT_EQ(kinds(separate).count("relu_grad"), 1u);
  ASSERT_EQ(fused.outputs.size(), separate.outputs.size());
  for (size_t i = 0; i < fused.outputs.size(); ++i)
    expectSameBits(fused.outputs[i], separate.outputs[i],
                   "result " + std::to_string(i));
}

// adam_update / sgd_update whose gradient is cast from bf16 and read by
// nothing else run as one step reading the bf16 gradient; a cast result
// with another reader (a graph output) keeps its cast. Sizes below and
// above the parallel threshold, with a SIMD remainder.
TEST(OptimizerBf16Grad, FusedStepMatchesCastAndUpdate) {
  const DType F32 = DType::kF32, BF16 = DType::kBF16;
  struct Case {
    const char *name;
    const char *kind;
    int64_t n;
    bool castShared;
  };
  std::vector<Case> cases = {
      {"AdamSmall", "adam_update", 37, false},
      {"AdamLarge", "adam_update", 50003, false},
      {"SgdLarge", "sgd_update", 50003, false},
      {"AdamCastShared", "adam_update", 101, true},
  };
  uint32_t seed = 1900;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const bool adam = std::strcmp(c.kind, "adam_update") == 0;
    const Shape s = {c.n};
    Tensor p = randomF32(s, seed++), gb = toBf16(randomF32(s, seed++)),
           m = randomF32(s, seed++), v = randomF32(s, seed++);
    for (int64_t i = 0; i < c.n; ++i)
      v.data<float>()[i] = std::fabs(v.data<float>()[i]) * 1e-3f;
    PlanBuilder b("optimizer_bf16_grad");
    int pi = b.addInput("p", F32, s);
    int gi = b.addInput("g", BF16, s);
    int mi = b.addInput("m", F32, s);
    int vi = adam ? b.addInput("v", F32, s) : -1;
    int si = adam ? b.addInput("step", F32, {}) : -1;
    int g32 = c.castShared ? b.addOutput("g32", F32, s)
                           : b.addIntermediate("g32", F32, s);
    b.addOp("cast", "g/to_f32", {gi}, {g32}, {});
    std::vector<Tensor> inputs = {p, gb, m};
    if (adam) {
      int np = b.addOutput("p_new", F32, s), nm = b.addOutput("m_new", F32, s),
          nv = b.addOutput("v_new", F32, s);
      b.addOp("adam_update", "p/adam", {pi, g32, mi, vi, si}, {np, nm, nv},
              {{"lr", floatAttr(1e-3)}, {"weight_decay", floatAttr(0.01)}});
      inputs.push_back(v);
      inputs.push_back(makeF32({}, {3}));
    } else {
      int np = b.addOutput("p_new", F32, s), nm = b.addOutput("m_new", F32, s);
      b.addOp("sgd_update", "p/sgd", {pi, g32, mi}, {np, nm},
              {{"lr", floatAttr(0.01)},
               {"momentum", floatAttr(0.9)},
               {"weight_decay", floatAttr(5e-4)},
               {"nesterov", boolAttr(true)}});
    }
    auto plan = b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    RunResult fused = runPlan(*plan, "cpu", inputs);
    setenv("GOPT_OPTIMIZER_BF16_GRAD", "0", 1);
    RunResult separate = runPlan(*plan, "cpu", inputs);
    unsetenv("GOPT_OPTIMIZER_BF16_GRAD");
    RunResult ref = runPlan(*plan, "reference", inputs);
    const std::string fusedKind = std::string("cast+") + c.kind;
    EXPECT_EQ(kinds(fused).count(fusedKind), c.castShared ? 0u : 1u);
    EXPECT_EQ(kinds(separate).count(fusedKind), 0u);
    ASSERT_EQ(fused.outputs.size(), separate.outputs.size());
    ASSERT_EQ(fused.outputs.size(), ref.outputs.size());
    for (size_t i = 0; i < fused.outputs.size(); ++i) {
      const std::string what = "result " + std::to_string(i);
      expectSameBits(fused.outputs[i], separate.outputs[i], what);
      expectNear(fused.outputs[i], ref.outputs[i], 1e-5, what);
    }
  }
}

} // namespace
