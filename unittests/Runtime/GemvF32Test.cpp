//===- GemvF32Test.cpp - gopt's f32 matrix-vector product vs. a loop ------===//
//
// runtime/src/cpu/GemvF32.cpp runs dense layers at batch 1 (MobileNetV3's
// classifier); it must compute what a double-precision loop does for every
// path it has: full 64-column panels, narrower last panels (48, 16 and a
// partial 16), either weight layout, bias or none, relu, one thread or two.
// Then in a plan: matmul + bias add (+ relu) taken as one step on "cpu" for
// one row, not for several, and GOPT_GEMV_F32=0.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/GemvF32.h"
#include "../../runtime/src/cpu/HugePageBuffer.h"
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
using gopt::runtime::cpu::GemvF32;
using gopt::runtime::cpu::GemvF32Shape;
using gopt::runtime::cpu::HugePageBuffer;

namespace {

// Weights, bias and input, uniform in [-1, 1).
void fillUniform(std::mt19937 &rng, std::vector<float> &w,
                 std::vector<float> &b, std::vector<float> &x) {
  std::uniform_real_distribution<float> u(-1, 1);
  for (std::vector<float> *vec : {&w, &b, &x})
    for (float &v : *vec)
      v = u(rng);
}

// Largest |kernel - double loop| over the result.
double maxError(const GemvF32Shape &s, bool bias, int threads) {
  std::mt19937 rng(5);
  std::vector<float> w(s.k * s.n), b(s.n), x(s.k), y(s.n + 16, 1e9f);
  fillUniform(rng, w, b, x);
  std::unique_ptr<GemvF32> g = GemvF32::create(s, w.data());
  EXPECT_TRUE(g);
  if (!g)
    return 1e9;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  g->run(x.data(), bias ? b.data() : nullptr, y.data());
  omp_set_num_threads(saved);
  double worst = 0;
  for (int64_t o = 0; o < s.n; ++o) {
    double acc = bias ? b[o] : 0.0;
    for (int64_t i = 0; i < s.k; ++i)
      acc += double(x[i]) * (s.transB ? w[o * s.k + i] : w[i * s.n + o]);
    if (s.relu)
      acc = std::max(acc, 0.0);
    worst = std::max(worst, std::fabs(acc - y[o]));
  }
  // Nothing written past the result.
  for (int64_t o = s.n; o < s.n + 16; ++o)
    if (y[o] != 1e9f)
      return 1e9;
  return worst;
}

GemvF32Shape shape(int64_t k, int64_t n, bool transB, bool relu) {
  GemvF32Shape s;
  s.k = k;
  s.n = n;
  s.transB = transB;
  s.relu = relu;
  return s;
}

TEST(GemvF32, MatchesDoubleLoop) {
  for (bool transB : {true, false}) {
    // MobileNetV3's classifier: 960 -> 1280 (20 panels), 1280 -> 1000 (15
    // panels and one of 40 columns: 16 + 16 + 8).
    EXPECT_LT(maxError(shape(960, 1280, transB, false), true, 1), 1e-3)
        << transB;
    EXPECT_LT(maxError(shape(1280, 1000, transB, true), true, 2), 1e-3)
        << transB;
    // Panels of 48 and 16 columns, a partial one of 7, no bias.
    for (int64_t n : {112, 80, 7, 71})
      for (int threads : {1, 2})
        EXPECT_LT(maxError(shape(37, n, transB, n % 2 == 1), false, threads),
                  1e-4)
            << transB << " " << n;
  }
}

// runShare, as the squeeze-and-excitation kernel calls it from inside its
// own parallel region: each of nt shares writes whole panels, the shares
// tile [0, n) in order, and together they give run()'s bits.
TEST(GemvF32, SharesTileTheColumns) {
  std::mt19937 rng(9);
  for (int64_t n : {240, 48, 960, 7})
    for (int nt : {1, 2, 3, 5}) {
      SCOPED_TRACE(::testing::Message() << n << " columns, " << nt);
      const int64_t k = 33;
      std::vector<float> w(k * n), b(n), x(k), whole(n), shared(n, NAN);
      fillUniform(rng, w, b, x);
      std::unique_ptr<GemvF32> g =
          GemvF32::create(shape(k, n, true, false), w.data());
      ASSERT_TRUE(g);
      g->run(x.data(), b.data(), whole.data());
      int64_t next = 0;
      for (int id = 0; id < nt; ++id) {
        auto [first, last] =
            g->runShare(x.data(), b.data(), shared.data(), id, nt);
        EXPECT_EQ(first, next);
        EXPECT_TRUE(first == last || first % 64 == 0);
        next = last;
      }
      EXPECT_EQ(next, n);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(shared[j], whole[j]) << "column " << j;
    }
}

// Packed weights of 1 MiB and more start on a 2 MiB boundary (where Linux
// may back them with a huge page), smaller ones and all with
// GOPT_HUGE_PAGE_WEIGHTS=0 on a cache line; all start zeroed.
TEST(GemvF32, HugePageBuffer) {
  auto offset = [](const HugePageBuffer &b, uintptr_t align) {
    return reinterpret_cast<uintptr_t>(b.data()) % align;
  };
  auto zeroed = [](const HugePageBuffer &b) {
    return std::all_of(b.data(), b.data() + b.size(),
                       [](float v) { return v == 0.0f; });
  };
  HugePageBuffer big(1280 * 960), small(1000);
  EXPECT_EQ(big.size(), 1280u * 960u);
  EXPECT_EQ(offset(big, uintptr_t(2) << 20), 0u);
  EXPECT_EQ(offset(small, 64), 0u);
  EXPECT_TRUE(zeroed(big));
  EXPECT_TRUE(zeroed(small));
  setenv("GOPT_HUGE_PAGE_WEIGHTS", "0", 1);
  HugePageBuffer off(1280 * 960);
  EXPECT_EQ(offset(off, 64), 0u);
  EXPECT_TRUE(zeroed(off));
  unsetenv("GOPT_HUGE_PAGE_WEIGHTS");
}

const DType F32 = DType::kF32;

// matmul [rows, k] x [n, k]^T + bias, then relu, on "cpu" and "reference".
CpuOutcome runPlanDense(int64_t rows, int64_t k, int64_t n) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {rows, k});
  int w = b.addConstant("w", randomF32({n, k}, 41));
  int bias = b.addConstant("bias", randomF32({n}, 42));
  Shape yshape = {rows, n};
  int m = b.addIntermediate("m", F32, yshape);
  b.addOp("matmul", "mm", {x, w}, {m}, {{"transpose_b", boolAttr(true)}});
  int a = b.addIntermediate("a", F32, yshape);
  b.addOp("add", "add", {m, bias}, {a});
  int y = b.addOutput("y", F32, yshape);
  b.addOp("relu", "relu", {a}, {y});
  std::vector<Tensor> inputs = {randomF32({rows, k}, 43)};
  return cpuAgainstReference(b, inputs, "matmul");
}

TEST(GemvF32, WhereItIsTaken) {
  CpuOutcome one = runPlanDense(1, 300, 200);
  EXPECT_EQ(one.impl, "gopt-gemv-f32");
  EXPECT_EQ(one.kind, "matmul+add+relu");
  EXPECT_LT(one.maxDiff, 1e-4f);
  CpuOutcome four = runPlanDense(4, 300, 200);
  EXPECT_NE(four.impl, "gopt-gemv-f32");
  EXPECT_LT(four.maxDiff, 1e-4f);
  setenv("GOPT_GEMV_F32", "0", 1);
  CpuOutcome off = runPlanDense(1, 300, 200);
  EXPECT_NE(off.impl, "gopt-gemv-f32");
  EXPECT_EQ(off.kind, "matmul+add+relu");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_GEMV_F32");
}

} // namespace
