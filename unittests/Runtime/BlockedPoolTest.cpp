//===- BlockedPoolTest.cpp - nChw16c max pooling vs. a plain loop ---------===//
//
// gopt's max pooling of f32 nChw16c tensors (runtime/src/cpu/BlockedPool.cpp)
// against a loop over the windows in double: ResNet's 3x3 stride-2 pad-1
// pool with odd sizes (windows clipped at every edge), two images, a window
// with no padding, one larger than its stride and a 3x3 one over a source 2
// columns wide, on one and two threads; and, through a plan whose stem
// writes nChw16c (a ResNet stem: conv, relu, pool, a block with a Winograd
// convolution and a residual sum), that the CPU backend takes it unless
// GOPT_BLOCKED_POOL=0.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/BlockedPool.h"
#include "TestUtil.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
using gopt::runtime::cpu::BlockedPoolGeometry;

namespace {

// Number of result elements that differ from the loop's.
int64_t mismatches(const BlockedPoolGeometry &g, int threads) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> x(g.images * g.blocks * g.h * g.w * 16);
  for (float &v : x)
    v = u(rng);
  std::vector<float> y(g.images * g.blocks * g.oh * g.ow * 16, -1.0f);
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  bool ran = gopt::runtime::cpu::blockedMaxPool(g, x.data(), y.data());
  omp_set_num_threads(before);
  if (!ran)
    return -1;
  int64_t bad = 0;
  for (int64_t p = 0; p < g.images * g.blocks; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t c = 0; c < 16; ++c) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t a = 0; a < g.kh; ++a)
            for (int64_t b = 0; b < g.kw; ++b) {
              int64_t iy = oy * g.sh - g.padT + a, ix = ox * g.sw - g.padL + b;
              if (iy < 0 || ix < 0 || iy >= g.h || ix >= g.w)
                continue;
              const int64_t n = p / g.blocks, blk = p % g.blocks;
              const int64_t at =
                  g.nhwcSource ? ((n * g.h + iy) * g.w + ix) * g.blocks * 16 +
                                     blk * 16 + c
                               : ((p * g.h + iy) * g.w + ix) * 16 + c;
              m = std::max(m, double(x[at]));
            }
          if (double(y[((p * g.oh + oy) * g.ow + ox) * 16 + c]) != m)
            ++bad;
        }
  return bad;
}

TEST(BlockedMaxPool, MatchesLoop) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512";
  // ResNet's pool on 2 images of 48 channels at 113x111 (odd: the last
  // window of each row and column holds 2 elements).
  BlockedPoolGeometry resnet{2, 3, 113, 111, 57, 56, 3, 3, 2, 2, 1, 1};
  for (int threads : {1, 2})
    EXPECT_EQ(mismatches(resnet, threads), 0) << threads;
  // 2x2 stride 2 without padding, and 5x5 stride 3 with padding 2.
  EXPECT_EQ(mismatches({1, 2, 10, 12, 5, 6, 2, 2, 2, 2, 0, 0}, 1), 0);
  EXPECT_EQ(mismatches({1, 1, 17, 17, 6, 6, 5, 5, 3, 3, 2, 2}, 2), 0);
  // 3x3 stride 2 over 2 columns with one column of padding after them: the
  // only window holds full rows but not 3 columns.
  EXPECT_EQ(mismatches({1, 1, 4, 2, 2, 1, 3, 3, 2, 2, 0, 0}, 1), 0);
}

TEST(BlockedMaxPool, NhwcSourceMatchesLoop) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512";
  // The same shapes read from an NHWC source (channel blocks interleaved
  // in each pixel), written nChw16c.
  BlockedPoolGeometry resnet{2, 3, 113, 111, 57, 56, 3, 3, 2, 2, 1, 1, true};
  for (int threads : {1, 2})
    EXPECT_EQ(mismatches(resnet, threads), 0) << threads;
  EXPECT_EQ(mismatches({1, 2, 10, 12, 5, 6, 2, 2, 2, 2, 0, 0, true}, 1), 0);
  EXPECT_EQ(mismatches({3, 4, 17, 17, 6, 6, 5, 5, 3, 3, 2, 2, true}, 2), 0);
  EXPECT_EQ(mismatches({1, 1, 4, 2, 2, 1, 3, 3, 2, 2, 0, 0, true}, 1), 0);
}

// x [batch, 3, 64, 64] -> 7x7/2 conv (64) + relu -> 3x3/2 max pool -> a
// basic block (two 3x3 convs, the sum with the pool's result, relu);
// returns the pool step's implementation and the largest difference from
// "reference", and counts the reorders in `reorders`.
std::string stemPoolImpl(float *maxDiff, int64_t batch = 1,
                         int *reorders = nullptr) {
  PlanBuilder b("g");
  auto conv = [&](int in, int64_t cin, int64_t cout, int64_t k, int64_t s,
                  int64_t hw, const char *act, uint32_t seed) {
    Tensor f = randomF32({cout, cin, k, k}, seed);
    for (int64_t i = 0; i < f.numElements(); ++i)
      f.data<float>()[i] /= float(cin * k);
    int64_t pad = k / 2;
    int y = b.addIntermediate("c" + std::to_string(seed), DType::kF32,
                              {batch, cout, hw, hw});
    b.addOp("conv2d", "conv" + std::to_string(seed),
            {in, b.addConstant("f" + std::to_string(seed), f),
             b.addConstant("b" + std::to_string(seed),
                           randomF32({cout}, seed + 100))},
            {y},
            {{"data_format", stringAttr("NCHW")},
             {"filter_format", stringAttr("OIHW")},
             {"strides", intsAttr({s, s})},
             {"pads", intsAttr({pad, pad, pad, pad})},
             {"activation", stringAttr(act)}});
    return y;
  };
  int x = b.addInput("x", DType::kF32, {batch, 3, 64, 64});
  int stem = conv(x, 3, 64, 7, 2, 32, "relu", 1);
  int pool = b.addIntermediate("pool", DType::kF32, {batch, 64, 16, 16});
  b.addOp("max_pool", "pool", {stem}, {pool},
          {{"data_format", stringAttr("NCHW")},
           {"kernel", intsAttr({3, 3})},
           {"strides", intsAttr({2, 2})},
           {"pads", intsAttr({1, 1, 1, 1})}});
  int c1 = conv(pool, 64, 64, 3, 1, 16, "relu", 2);
  int c2 = conv(c1, 64, 64, 3, 1, 16, "none", 3);
  int sum = b.addIntermediate("sum", DType::kF32, {batch, 64, 16, 16});
  b.addOp("add", "add", {c2, pool}, {sum});
  int y = b.addOutput("y", DType::kF32, {batch, 64, 16, 16});
  b.addOp("relu", "relu", {sum}, {y});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  if (!plan.ok())
    return "";
  std::vector<Tensor> inputs = {randomF32({batch, 3, 64, 64}, 9)};
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult cpu = runPlan(*plan, "cpu", inputs);
  if (ref.outputs.size() != 1 || cpu.outputs.size() != 1)
    return "";
  *maxDiff = maxAbsDiff(ref.outputs[0], cpu.outputs[0]);
  if (reorders) {
    *reorders = 0;
    for (const OpProfile &p : cpu.profiles)
      *reorders += p.kind == "reorder";
  }
  for (const OpProfile &p : cpu.profiles)
    if (p.kind == "max_pool")
      return p.implementation;
  return "";
}

TEST(BlockedMaxPool, TakenAfterABlockedStem) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512";
  float diff = 1;
  EXPECT_EQ(stemPoolImpl(&diff), "gopt-blocked");
  EXPECT_LT(diff, 1e-4f);
  setenv("GOPT_BLOCKED_POOL", "0", 1);
  EXPECT_EQ(stemPoolImpl(&diff), "onednn");
  EXPECT_LT(diff, 1e-4f);
  unsetenv("GOPT_BLOCKED_POOL");
}

// At batch 8 oneDNN runs the 3-channel stem channels-last (NHWC); the pool
// reads that and writes nChw16c for the Winograd block after it, so no
// reorder runs between them (GOPT_BLOCKED_POOL_NHWC=0: oneDNN's NHWC pool
// and a reorder after it).
TEST(BlockedMaxPool, TakenAfterAnNhwcStem) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "no AVX-512";
  float diff = 1;
  int withPool = -1, withoutPool = -1;
  EXPECT_EQ(stemPoolImpl(&diff, 8, &withPool), "gopt-blocked");
  EXPECT_LT(diff, 1e-4f);
  setenv("GOPT_BLOCKED_POOL_NHWC", "0", 1);
  EXPECT_EQ(stemPoolImpl(&diff, 8, &withoutPool), "onednn");
  EXPECT_LT(diff, 1e-4f);
  unsetenv("GOPT_BLOCKED_POOL_NHWC");
  EXPECT_LT(withPool, withoutPool);
}

} // namespace
