//===- FastKernelsTest.cpp - Fast CPU kernels vs. the reference -----------===//
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

// Runs a one-op plan on "reference" and "cpu", checks that "cpu" used
// `impl` for it and that the results agree.
void expectSameAsReference(const std::string &kind, const AttrMap &attrs,
                           const std::vector<Tensor> &inputs,
                           const Shape &outShape, const char *impl = "fast",
                           float tol = 1e-5f) {
  // Besides the op only reorders out of oneDNN's layouts may run.
  BackendPair r = runOnBothBackends(kind, attrs, inputs, {F32, outShape}, {}, 1,
                                    {"reorder"});
  EXPECT_EQ(r.cpuImplementation, impl);
  EXPECT_LE(maxAbsDiff(r.reference, r.cpu), tol);
}

TEST(FastBinary, SameShapeOddSizeAndLarge) {
  for (const char *kind : {"add", "sub", "mul", "div"}) {
    expectSameAsReference(kind, {},
                          {randomF32({3, 5, 7}, 1), randomF32({3, 5, 7}, 2)},
                          {3, 5, 7});
    // Large enough to run multithreaded.
    expectSameAsReference(
        kind, {},
        {randomF32({2, 33, 29, 31}, 3), randomF32({2, 33, 29, 31}, 4)},
        {2, 33, 29, 31});
  }
}

TEST(FastBinary, PerChannelNchwBothOperandOrders) {
  for (const char *kind : {"add", "sub", "mul", "div"}) {
    expectSameAsReference(kind, {},
                          {randomF32({2, 5, 3, 7}, 5), randomF32({5, 1, 1}, 6)},
                          {2, 5, 3, 7});
    expectSameAsReference(
        kind, {}, {randomF32({1, 5, 1, 1}, 7), randomF32({2, 5, 3, 7}, 8)},
        {2, 5, 3, 7});
    expectSameAsReference(
        kind, {}, {randomF32({4, 37, 19, 23}, 9), randomF32({1, 37, 1, 1}, 10)},
        {4, 37, 19, 23});
  }
}

TEST(FastBinary, TrailingVectorNhwcAndScalar) {
  for (const char *kind : {"add", "sub", "mul", "div"}) {
    // Per-channel NHWC (and a Gemm bias over [batch, features]).
    expectSameAsReference(kind, {},
                          {randomF32({2, 3, 4, 11}, 11), randomF32({11}, 12)},
                          {2, 3, 4, 11});
    expectSameAsReference(
        kind, {}, {randomF32({13}, 13), randomF32({3, 13}, 14)}, {3, 13});
    expectSameAsReference(kind, {}, {randomF32({3, 13}, 15), randomF32({}, 16)},
                          {3, 13});
    expectSameAsReference(
        kind, {}, {randomF32({1}, 17), randomF32({3, 13}, 18)}, {3, 13});
    // A middle block: [1, 6, 1] over [4, 6, 5].
    expectSameAsReference(kind, {},
                          {randomF32({4, 6, 5}, 19), randomF32({1, 6, 1}, 20)},
                          {4, 6, 5});
  }
}

TEST(FastBinary, TwoBroadcastOperandsFallBackToReference) {
  // One operand along a block of dims, the other everywhere else (an outer
  // product): the fast loops.
  expectSameAsReference("add", {},
                        {randomF32({3, 1}, 21), randomF32({1, 4}, 22)}, {3, 4},
                        "fast");
  // Both varying along dim 2: the reference.
  expectSameAsReference("add", {},
                        {randomF32({3, 1, 5}, 21), randomF32({1, 4, 5}, 22)},
                        {3, 4, 5}, "reference");
  // Two separate broadcast blocks.
  expectSameAsReference("mul", {},
                        {randomF32({2, 3, 4}, 23), randomF32({2, 1, 4}, 24)},
                        {2, 3, 4}, "reference");
}

TEST(FastUnary, ReluRelu6Clip) {
  Tensor x = randomF32({3, 7, 5, 9}, 25);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] *= 10; // reach past 6
  expectSameAsReference("relu", {}, {x}, x.shape());
  expectSameAsReference("relu6", {}, {x}, x.shape());
  expectSameAsReference("clip",
                        {{"min", floatAttr(-2.5)}, {"max", floatAttr(4)}}, {x},
                        x.shape());
  Tensor big = randomF32({2, 64, 31, 17}, 26);
  expectSameAsReference("relu", {}, {big}, big.shape());
}

// The math family runs its ODS functions in f32 where the reference uses
// double: the same values to f32 rounding, with the op's attributes.
TEST(FastUnaryMath, MatchesReference) {
  Tensor x = randomF32({2, 33, 29, 31}, 27);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] *= 8; // both sides of hard_swish's and elu's kinks
  for (const char *kind :
       {"hard_swish", "hard_sigmoid", "elu", "softplus", "mish", "sin"})
    expectSameAsReference(kind, {}, {x}, x.shape(), "fast", 2e-5f);
  expectSameAsReference(
      "hard_sigmoid", {{"alpha", floatAttr(1.0 / 6)}, {"beta", floatAttr(0.5)}},
      {x}, x.shape(), "fast", 2e-5f);
  // Gradients stay on the reference kernel.
  expectSameAsReference("elu_grad", {}, {x, x}, x.shape(), "reference");
}

// erf and sigmoid in f32 (erf as a rational function: within 4.2e-7),
// across both tails and zero; x in [-8, 8].
TEST(FastUnaryMath, ErfAndSigmoidMatchReference) {
  Tensor x = randomF32({3, 37, 41}, 28);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] *= 8;
  x.data<float>()[0] = 0.0f;
  x.data<float>()[1] = 4.0f;
  x.data<float>()[2] = -30.0f;
  expectSameAsReference("erf", {}, {x}, x.shape(), "fast", 1e-6f);
  expectSameAsReference("sigmoid", {}, {x}, x.shape(), "fast", 1e-6f);
}

// NCHW runs as a oneDNN pooling (it may read blocked layouts), NHWC fast.
TEST(FastGlobalAvgPool, BothLayoutsOddSizes) {
  expectSameAsReference("global_avg_pool",
                        {{"data_format", stringAttr("NHWC")}},
                        {randomF32({3, 5, 7, 9}, 27)}, {3, 1, 1, 9});
  expectSameAsReference("global_avg_pool",
                        {{"data_format", stringAttr("NCHW")}},
                        {randomF32({3, 9, 5, 7}, 28)}, {3, 9, 1, 1}, "onednn");
  expectSameAsReference(
      "global_avg_pool", {{"data_format", stringAttr("NCHW")}},
      {randomF32({8, 64, 13, 11}, 29)}, {8, 64, 1, 1}, "onednn");
}

TEST(FastSoftmax, LastAxisAndLog) {
  expectSameAsReference("softmax", {}, {randomF32({5, 17}, 30)}, {5, 17});
  expectSameAsReference("log_softmax", {{"axis", intAttr(2)}},
                        {randomF32({2, 3, 1001}, 31)}, {2, 3, 1001});
  expectSameAsReference("softmax", {}, {randomF32({600, 100}, 32)}, {600, 100});
  // Another axis stays with the reference.
  expectSameAsReference("softmax", {{"axis", intAttr(0)}},
                        {randomF32({5, 17}, 33)}, {5, 17}, "reference");
}

} // namespace

namespace {

// Exact (a permutation moves values); tile edges covered by sizes that are
// not multiples of the 32-element tile, and a size past the parallel
// threshold.
TEST(FastTranspose, BlockPermutationsMatchReference) {
  expectSameAsReference("transpose", {{"perm", intsAttr({0, 3, 1, 2})}},
                        {randomF32({2, 5, 7, 3}, 1)}, {2, 3, 5, 7}, "fast",
                        0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({0, 2, 3, 1})}},
                        {randomF32({2, 3, 5, 7}, 2)}, {2, 5, 7, 3}, "fast",
                        0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({0, 3, 1, 2})}},
                        {randomF32({4, 33, 65, 17}, 3)}, {4, 17, 33, 65},
                        "fast", 0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({1, 0})}},
                        {randomF32({37, 70}, 4)}, {70, 37}, "fast", 0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({2, 0, 1})}},
                        {randomF32({3, 4, 5}, 5)}, {5, 3, 4}, "fast", 0.0f);
}

// Runs one bf16 op on "reference" and "cpu" and checks that "cpu" used
// `impl` and that every result bit agrees.
void expectBf16BitsAsReference(const std::string &kind, const AttrMap &attrs,
                               const Tensor &x, const Shape &outShape,
                               const char *impl = "fast") {
  BackendPair r = runOnBothBackends(kind, attrs, {x}, {DType::kBF16, outShape});
  EXPECT_EQ(r.cpuImplementation, impl);
  ASSERT_EQ(r.reference.numElements(), r.cpu.numElements());
  EXPECT_EQ(std::memcmp(r.reference.data(), r.cpu.data(),
                        r.reference.numElements() * 2),
            0);
}

// 2-byte elements (bf16) go through 8x8 register blocks, 4-byte ones 4x4:
// every bit moved as it is, at block edges and in the tails of 32-element
// tiles (sizes prime to 8), the NHWC -> NCHW transpose in front of a
// training step's flatten included.
TEST(FastTranspose, Bf16BlocksMatchReferenceBitForBit) {
  expectBf16BitsAsReference("transpose", {{"perm", intsAttr({0, 3, 1, 2})}},
                            randomBf16({2, 12, 12, 64}, 11), {2, 64, 12, 12});
  expectBf16BitsAsReference("transpose", {{"perm", intsAttr({0, 3, 1, 2})}},
                            randomBf16({3, 13, 11, 37}, 12), {3, 37, 13, 11});
  expectBf16BitsAsReference("transpose", {{"perm", intsAttr({0, 2, 3, 1})}},
                            randomBf16({2, 37, 9, 17}, 13), {2, 9, 17, 37});
  expectBf16BitsAsReference("transpose", {{"perm", intsAttr({1, 0})}},
                            randomBf16({70, 45}, 14), {45, 70});
}

// NHWC max_pool whose windows tile the image runs gopt's loop: the first
// maximum, a NaN wins (quieted in bf16 as the reference rounds), -0 and +0
// tie; an edge remainder no window covers is skipped. Other windows stay
// with oneDNN.
TEST(FastMaxPool, TiledWindowsMatchReference) {
  AttrMap k2 = {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}};
  AttrMap k3 = {{"kernel", intsAttr({3, 2})}, {"strides", intsAttr({3, 2})}};
  auto special = [](Tensor x) {
    for (int64_t i = 0; i < x.numElements(); i += 7)
      x.data<float>()[i] = i % 3 ? NAN : -0.0f;
    return x;
  };
  expectSameAsReference("max_pool", k2,
                        {special(randomF32({4, 24, 24, 64}, 1))},
                        {4, 12, 12, 64}, "fast", 0.0f);
  expectSameAsReference("max_pool", k3, {special(randomF32({2, 10, 7, 5}, 2))},
                        {2, 3, 3, 5}, "fast", 0.0f);
  expectBf16BitsAsReference("max_pool", k2,
                            toBf16(special(randomF32({4, 24, 24, 64}, 3))),
                            {4, 12, 12, 64});
  expectBf16BitsAsReference("max_pool", k3,
                            toBf16(special(randomF32({2, 10, 7, 5}, 4))),
                            {2, 3, 3, 5});
  // Channels a multiple of 16 (the 64 above too) run AVX-512 loops where
  // the CPU has them: a 3x2 window with an edge remainder, and a first
  // window of -inf only.
  Tensor x32 = special(randomF32({2, 10, 7, 32}, 15));
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 2 * 32; ++i)
      x32.data<float>()[r * 7 * 32 + i] =
          -std::numeric_limits<float>::infinity();
  expectSameAsReference("max_pool", k3, {x32}, {2, 3, 3, 32}, "fast", 0.0f);
  // A signaling NaN's bits, quieted as the reference's rounding does.
  Tensor x32Bf16 = toBf16(x32);
  x32Bf16.data<uint16_t>()[7 * 32 * 3 + 5] = 0x7f81;
  expectBf16BitsAsReference("max_pool", k3, x32Bf16, {2, 3, 3, 32});
  expectSameAsReference(
      "max_pool", {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({1, 1})}},
      {randomF32({1, 5, 5, 3}, 5)}, {1, 4, 4, 3}, "onednn", 1e-6f);
}

// Permutations that keep the innermost dimension copy whole blocks
// (attention's head shuffles); ones that only move unit dimensions are a
// copy; both exact.
TEST(FastTranspose, BlockGathersAndUnitMovesMatchReference) {
  expectSameAsReference("transpose", {{"perm", intsAttr({0, 2, 1, 3})}},
                        {randomF32({2, 3, 4, 5}, 6)}, {2, 4, 3, 5}, "fast",
                        0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({1, 0, 2})}},
                        {randomF32({128, 3, 64}, 7)}, {3, 128, 64}, "fast",
                        0.0f);
  expectSameAsReference("transpose", {{"perm", intsAttr({2, 0, 1, 3})}},
                        {randomF32({3, 4, 5, 2}, 8)}, {5, 3, 4, 2}, "fast",
                        0.0f);
  // [128, 1, 64] -> [1, 128, 64]: the same bytes in the same order.
  expectSameAsReference("transpose", {{"perm", intsAttr({1, 0, 2})}},
                        {randomF32({128, 1, 64}, 9)}, {1, 128, 64}, "fast",
                        0.0f);
  // A unit dimension between two swapped ones: still a matrix transpose.
  expectSameAsReference("transpose", {{"perm", intsAttr({2, 1, 0})}},
                        {randomF32({6, 1, 7}, 10)}, {7, 1, 6}, "fast", 0.0f);
}

// Permutations that move the innermost dimension and are not a block swap
// stay on the reference kernel.
TEST(FastTranspose, OtherPermutationsUseReference) {
  expectSameAsReference("transpose", {{"perm", intsAttr({2, 1, 0})}},
                        {randomF32({3, 4, 5}, 11)}, {5, 4, 3}, "reference",
                        0.0f);
}

// Slices with unit steps along the last dimension copy blocks: a fused
// QKV split, steps on outer dimensions and an end past the dimension;
// exact. A step along the last dimension stays
// on the reference kernel.
TEST(FastSlice, BlockCopiesMatchReference) {
  expectSameAsReference("slice",
                        {{"starts", intsAttr({0, 0, 256})},
                         {"ends", intsAttr({128, 1, 512})},
                         {"steps", intsAttr({1, 1, 1})}},
                        {randomF32({128, 1, 768}, 21)}, {128, 1, 256}, "fast",
                        0.0f);
  expectSameAsReference("slice",
                        {{"starts", intsAttr({1, 1, 2})},
                         {"ends", intsAttr({100, 5, 7})},
                         {"steps", intsAttr({1, 2, 1})}},
                        {randomF32({4, 6, 9}, 22)}, {3, 2, 5}, "fast", 0.0f);
  expectSameAsReference("slice",
                        {{"starts", intsAttr({0, 1})},
                         {"ends", intsAttr({4, 9})},
                         {"steps", intsAttr({1, 2})}},
                        {randomF32({4, 9}, 24)}, {4, 4}, "reference", 0.0f);
  // Backward on outer dimensions: blocks read at falling offsets.
  expectSameAsReference("slice",
                        {{"starts", intsAttr({3, 9, 0})},
                         {"ends", intsAttr({-1, 0, 5})},
                         {"steps", intsAttr({-2, -1, 1})}},
                        {randomF32({4, 6, 9}, 25)}, {2, 5, 5}, "fast", 0.0f);
}

// layer_norm over the last axis and over two trailing axes, with scale and
// bias broadcast, small and past the parallel threshold.
TEST(FastLayerNorm, MatchesReference) {
  expectSameAsReference(
      "layer_norm", {{"axis", intAttr(-1)}},
      {randomF32({5, 7, 33}, 12), randomF32({33}, 13), randomF32({1}, 14)},
      {5, 7, 33});
  expectSameAsReference(
      "layer_norm", {{"axis", intAttr(1)}, {"epsilon", floatAttr(1e-3)}},
      {randomF32({3, 4, 6}, 15), randomF32({4, 1}, 16), randomF32({6}, 17)},
      {3, 4, 6});
  expectSameAsReference("layer_norm", {},
                        {randomF32({128, 4, 256}, 18), randomF32({256}, 19),
                         randomF32({256}, 20)},
                        {128, 4, 256});
}

} // namespace

namespace {

// Training batch_norm: the five results (y, batch mean and variance, running
// mean and variance) of the fast kernel against the reference, NCHW and
// NHWC, small and past the parallel threshold.
void expectTrainingBatchNormSameAsReference(const std::string &format,
                                            const Shape &xShape) {
  int64_t axis = format == "NCHW" ? 1 : static_cast<int64_t>(xShape.size()) - 1;
  int64_t channels = xShape[axis];
  PlanBuilder b("bn");
  int x = b.addInput("x", F32, xShape);
  std::vector<int> params;
  for (const char *name : {"scale", "offset", "mean", "var"})
    params.push_back(b.addInput(name, F32, {channels}));
  int y = b.addOutput("y", F32, xShape);
  std::vector<int> outs = {y};
  for (const char *name : {"batch_mean", "batch_var", "run_mean", "run_var"})
    outs.push_back(b.addOutput(name, F32, {channels}));
  b.addOp("batch_norm", "op", {x, params[0], params[1], params[2], params[3]},
          outs,
          {{"training", boolAttr(true)},
           {"data_format", stringAttr(format)},
           {"epsilon", floatAttr(1e-3)},
           {"momentum", floatAttr(0.9)}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor var = randomF32({channels}, 5);
  for (int64_t c = 0; c < channels; ++c)
    var.data<float>()[c] = std::abs(var.data<float>()[c]) + 0.5f;
  std::vector<std::pair<std::string, Tensor>> inputs = {
      {"x", randomF32(xShape, 1)},
      {"scale", randomF32({channels}, 2)},
      {"offset", randomF32({channels}, 3)},
      {"mean", randomF32({channels}, 4)},
      {"var", var}};
  std::map<std::string, std::vector<Tensor>> results;
  for (const char *backend : {"reference", "cpu"}) {
    SessionOptions options;
    options.backend = backend;
    options.threads = 2;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    for (auto &[name, value] : inputs)
      ASSERT_TRUE((*session)->setInput(name, value).ok());
    ASSERT_TRUE((*session)->run().ok());
    if (std::string(backend) == "cpu") {
      for (const OpProfile &p : (*session)->opProfiles()) {
        if (p.name == "op") {
          EXPECT_EQ(p.implementation, "fast");
        }
      }
    }
    for (const char *name :
         {"y", "batch_mean", "batch_var", "run_mean", "run_var"})
      results[backend].push_back((*session)->output(name)->clone());
  }
  for (size_t i = 0; i < 5; ++i)
    EXPECT_LE(maxAbsDiff(results["reference"][i], results["cpu"][i]), 1e-5f)
        << "result " << i << " (" << format << ")";
}

TEST(FastBatchNorm, TrainingMatchesReference) {
  expectTrainingBatchNormSameAsReference("NCHW", {2, 3, 5, 7});
  expectTrainingBatchNormSameAsReference("NHWC", {2, 5, 7, 3});
  expectTrainingBatchNormSameAsReference("NCHW", {8, 16, 20, 20});
  expectTrainingBatchNormSameAsReference("NHWC", {8, 20, 20, 16});
}

} // namespace
