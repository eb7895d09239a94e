//===- GemvF32Test.cpp - gopt's f32 matrix-vector product vs. a loop ------===//
//
// runtime/src/cpu/GemvF32.cpp multiplies one row by a constant matrix (a
// classifier at batch 1); it must compute what a double-precision loop
// does for whole and partial blocks of 128 columns (and a partial last
// vector), either matrix layout, bias and relu, one thread or two. Then in
// a plan: a matmul of one row plus a bias (Gemm's form) runs on it and
// matches the reference backend, and GOPT_GEMV_F32=0 keeps oneDNN's.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/GemvF32.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
using gopt::runtime::cpu::GemvF32;

namespace {

// Largest |kernel - double loop|.
double maxError(int64_t k, int64_t n, bool transposed, bool bias, bool relu,
                int threads) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> b(k * n), x(k), bv(n), y(n + 16, 7.0f);
  for (float &v : b)
    v = u(rng);
  for (float &v : x)
    v = u(rng);
  for (float &v : bv)
    v = u(rng);
  std::unique_ptr<GemvF32> g = GemvF32::create(k, n, b.data(), transposed);
  EXPECT_TRUE(g);
  if (!g)
    return 1e9;
  g->run(x.data(), bias ? bv.data() : nullptr, relu, y.data(), threads);
  double worst = 0;
  for (int64_t j = 0; j < n; ++j) {
    double acc = bias ? bv[j] : 0.0;
    for (int64_t i = 0; i < k; ++i)
      acc += double(x[i]) * (transposed ? b[j * k + i] : b[i * n + j]);
    if (relu)
      acc = std::max(acc, 0.0);
    worst = std::max(worst, std::fabs(acc - y[j]));
  }
  // Nothing written past the result.
  for (int64_t j = n; j < n + 16; ++j)
    if (y[j] != 7.0f)
      worst = 1e9;
  return worst;
}

TEST(GemvF32, MatchesDoubleLoop) {
  for (bool transposed : {true, false}) {
    // EfficientNet-B0's classifier: 7 blocks of 128 and one of 104 (its
    // last vector 8 columns), split between two threads.
    EXPECT_LT(maxError(1280, 1000, transposed, true, false, 1), 1e-4);
    EXPECT_LT(maxError(1280, 1000, transposed, true, false, 2), 1e-4);
    // One block of two vectors, the last of 4 columns; odd k; relu.
    EXPECT_LT(maxError(37, 20, transposed, false, true, 1), 1e-5);
    // Exactly two blocks with bias and relu on two threads.
    EXPECT_LT(maxError(300, 256, transposed, true, true, 2), 1e-4);
  }
}

const DType F32 = DType::kF32;

struct Outcome {
  std::string impl;
  float maxDiff = 1e9;
};

// [1, k] x constant B (+ bias row), optionally relu, on "cpu" and
// "reference".
Outcome runPlanGemv(int64_t k, int64_t n, bool transposed, bool relu) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {1, k});
  Shape bs = transposed ? Shape{n, k} : Shape{k, n};
  int w = b.addConstant("w", randomF32(bs, 41));
  int bias = b.addConstant("bias", randomF32({n}, 42));
  int m = b.addIntermediate("m", F32, {1, n});
  b.addOp("matmul", "fc", {x, w}, {m}, {{"transpose_b", boolAttr(transposed)}});
  int y = b.addOutput("y", F32, {1, n});
  if (relu) {
    int s = b.addIntermediate("s", F32, {1, n});
    b.addOp("add", "add", {m, bias}, {s});
    b.addOp("relu", "relu", {s}, {y});
  } else {
    b.addOp("add", "add", {m, bias}, {y});
  }
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  Outcome o;
  if (!plan.ok())
    return o;
  std::vector<Tensor> inputs = {randomF32({1, k}, 43)};
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult cpu = runPlan(*plan, "cpu", inputs);
  if (ref.outputs.size() != 1 || cpu.outputs.size() != 1)
    return o;
  o.maxDiff = maxAbsDiff(ref.outputs[0], cpu.outputs[0]);
  for (const OpProfile &p : cpu.profiles)
    if (p.kind.rfind("matmul", 0) == 0)
      o.impl = p.implementation;
  return o;
}

TEST(GemvF32, TakenForOneRowByAConstant) {
  for (bool transposed : {true, false}) {
    Outcome on = runPlanGemv(640, 500, transposed, false);
    EXPECT_EQ(on.impl, "gopt-gemv-f32") << transposed;
    EXPECT_LT(on.maxDiff, 1e-4f) << transposed;
  }
  Outcome relu = runPlanGemv(64, 40, false, true);
  EXPECT_EQ(relu.impl, "gopt-gemv-f32");
  EXPECT_LT(relu.maxDiff, 1e-4f);
  setenv("GOPT_GEMV_F32", "0", 1);
  Outcome off = runPlanGemv(640, 500, true, false);
  EXPECT_NE(off.impl, "gopt-gemv-f32");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_GEMV_F32");
}

} // namespace
