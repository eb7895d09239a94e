//===- CpuScheduleTest.cpp - Layouts, fusion and aliases of backend cpu ---===//
//
// Whole graphs (ResNet-like, NCHW) run on "cpu", where activations stay in
// oneDNN's blocked layouts, conv+add+relu chains fuse and reshapes alias,
// must compute what the reference backend computes op by op.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/DepthwiseConv.h"
#include "TestUtil.h"
#include "gopt/runtime/CpuInfo.h"

#include <set>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

AttrMap convAttrs(const char *activation = "none", int64_t stride = 1,
                  int64_t pad = 1) {
  return {{"data_format", stringAttr("NCHW")},
          {"filter_format", stringAttr("OIHW")},
          {"strides", intsAttr({stride, stride})},
          {"pads", intsAttr({pad, pad, pad, pad})},
          {"activation", stringAttr(activation)}};
}

struct Graph {
  PlanBuilder b{"g"};
  uint32_t seed = 100;
  int conv(int x, int64_t cin, int64_t cout, const Shape &outShape,
           const char *act = "none", int64_t k = 3, int64_t stride = 1) {
    // Name and data from one seed each: not both in one call's arguments,
    // whose evaluation order is unspecified.
    uint32_t wSeed = seed++, bSeed = seed++;
    int w = b.addConstant("w" + std::to_string(wSeed),
                          randomF32({cout, cin, k, k}, wSeed));
    int bias =
        b.addConstant("b" + std::to_string(bSeed), randomF32({cout}, bSeed));
    int y = b.addIntermediate("c" + std::to_string(seed), F32, outShape);
    b.addOp("conv2d", "conv" + std::to_string(seed), {x, w, bias}, {y},
            convAttrs(act, stride, k / 2));
    return y;
  }
  // batch_norm's scale, offset, mean and variance (positive) constants.
  std::vector<int> batchNormStats(int64_t channels, uint32_t firstSeed) {
    std::vector<int> stats;
    for (uint32_t i = 0; i < 4; ++i) {
      Tensor v = randomF32({channels}, firstSeed + i);
      if (i == 3)
        for (int64_t j = 0; j < channels; ++j)
          v.data<float>()[j] = std::abs(v.data<float>()[j]) + 0.5f;
      stats.push_back(b.addConstant("bn" + std::to_string(firstSeed + i), v));
    }
    return stats;
  }
  int op(const std::string &kind, std::vector<int> ins, const Shape &shape,
         const AttrMap &attrs = {}, bool output = false) {
    std::string name = kind + std::to_string(seed++);
    int y = output ? b.addOutput(name, F32, shape)
                   : b.addIntermediate(name, F32, shape);
    b.addOp(kind, name, ins, {y}, attrs);
    return y;
  }
};

void expectSame(const Plan &plan, const std::vector<Tensor> &inputs,
                int64_t batch, const RunResult &cpu, float tolerance = 2e-4f) {
  RunResult ref = runPlan(plan, "reference", inputs, batch);
  ASSERT_EQ(ref.outputs.size(), cpu.outputs.size());
  for (size_t i = 0; i < ref.outputs.size(); ++i)
    EXPECT_LT(maxAbsDiff(ref.outputs[i], cpu.outputs[i]), tolerance)
        << "output " << i;
}

// stem conv+relu, max_pool, two basic blocks (the second with a strided
// downsample whose conv comes after the main path's), global_avg_pool,
// flatten, matmul + bias, softmax.
Plan resnetLike(bool residualAlsoOutput) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 3, 16, 16});
  int c0 = g.conv(x, 3, 16, {-1, 16, 16, 16}, "none");
  int r0 = g.op("relu", {c0}, {-1, 16, 16, 16});
  int p0 = g.op("max_pool", {r0}, {-1, 16, 8, 8},
                {{"data_format", stringAttr("NCHW")},
                 {"kernel", intsAttr({3, 3})},
                 {"strides", intsAttr({2, 2})},
                 {"pads", intsAttr({1, 1, 1, 1})}});
  // Block 1: identity shortcut.
  int a1 = g.conv(p0, 16, 16, {-1, 16, 8, 8}, "relu");
  int a2 = g.conv(a1, 16, 16, {-1, 16, 8, 8});
  int s1 = g.op("add", {a2, p0}, {-1, 16, 8, 8});
  int o1 = g.op("relu", {s1}, {-1, 16, 8, 8});
  if (residualAlsoOutput) // p0 stays live: the sum may not overwrite it
    g.op("mul", {p0, p0}, {-1, 16, 8, 8}, {}, /*output=*/true);
  // Block 2: main path first, then the 1x1 strided downsample.
  int b1 = g.conv(o1, 16, 24, {-1, 24, 4, 4}, "relu", 3, 2);
  int b2 = g.conv(b1, 24, 24, {-1, 24, 4, 4});
  int d = g.conv(o1, 16, 24, {-1, 24, 4, 4}, "none", 1, 2);
  int s2 = g.op("add", {d, b2}, {-1, 24, 4, 4});
  int o2 = g.op("relu", {s2}, {-1, 24, 4, 4});
  int gp = g.op("global_avg_pool", {o2}, {-1, 24, 1, 1},
                {{"data_format", stringAttr("NCHW")}});
  int f = g.op("flatten", {gp}, {-1, 24});
  int w = g.b.addConstant("fc", randomF32({24, 10}, 7));
  int bias = g.b.addConstant("fcb", randomF32({10}, 8));
  int mm = g.op("matmul", {f, w}, {-1, 10});
  int logits = g.op("add", {mm, bias}, {-1, 10});
  g.op("softmax", {logits}, {-1, 10}, {}, /*output=*/true);
  auto plan = g.b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return *plan;
}

TEST(CpuSchedule, ResNetLikeMatchesReferenceAndFuses) {
  // With the direct convolutions' layouts: a Winograd convolution reads and
  // writes nChw16c, which costs a reorder from other blocked layouts
  // (OneDnnConv.WinogradFor3x3StrideOne covers it).
  setenv("GOPT_CONV_WINOGRAD", "0", 1);
  Plan plan = resnetLike(false);
  for (int64_t batch : {1, 3}) {
    std::vector<Tensor> in = {randomF32({batch, 3, 16, 16}, 1)};
    RunResult cpu = runPlan(plan, "cpu", in, batch);
    expectSame(plan, in, batch, cpu);
    std::multiset<std::string> k = kinds(cpu);
    EXPECT_EQ(k.count("conv2d+relu"), 1u); // the stem
    EXPECT_EQ(k.count("conv2d+add+relu"), 2u);
    EXPECT_EQ(k.count("relu"), 0u);
    // The classifier's bias add runs as the matmul's oneDNN post-op.
    EXPECT_EQ(k.count("add"), 0u);
    EXPECT_EQ(k.count("matmul+add"), 1u);
    for (const OpProfile &p : cpu.profiles) {
      if (p.kind == "flatten") {
        EXPECT_EQ(p.implementation, "alias");
      }
    }
    // Activations stay in oneDNN's layouts from the stem to the global
    // pooling: at most the input and the pooled result are reordered.
    EXPECT_LE(k.count("reorder"), 2u);
  }
  unsetenv("GOPT_CONV_WINOGRAD");
}

TEST(CpuSchedule, LiveResidualIsCopiedNotOverwritten) {
  Plan plan = resnetLike(true);
  std::vector<Tensor> in = {randomF32({2, 3, 16, 16}, 2)};
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  expectSame(plan, in, 2, cpu);
  EXPECT_EQ(kinds(cpu).count("conv2d+add+relu"), 2u);
}

TEST(CpuSchedule, GraphInputResidualAndStandaloneBlockedOps) {
  // conv -> add(graph input) -> relu6 -> conv -> batch_norm -> relu ->
  // sub(itself) -> output: the residual is an input (copied), and
  // batch_norm/relu/sub run on the blocked layout.
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 8, 9, 7});
  int c = g.conv(x, 8, 8, {-1, 8, 9, 7});
  int s = g.op("add", {x, c}, {-1, 8, 9, 7});
  int r = g.op("relu6", {s}, {-1, 8, 9, 7});
  int c2 = g.conv(r, 8, 16, {-1, 16, 9, 7}, "sigmoid");
  std::vector<int> stats = g.batchNormStats(16, 50);
  int bn =
      g.op("batch_norm", {c2, stats[0], stats[1], stats[2], stats[3]},
           {-1, 16, 9, 7},
           {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-3)}});
  int rl = g.op("relu", {bn}, {-1, 16, 9, 7});
  int m = g.op("mul", {rl, bn}, {-1, 16, 9, 7});
  g.op("reshape", {m}, {-1, 16 * 63}, {{"shape", intsAttr({-1, 16 * 63})}},
       /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({2, 8, 9, 7}, 3)};
  RunResult cpu = runPlan(*plan, "cpu", in, 2);
  expectSame(*plan, in, 2, cpu);
  EXPECT_EQ(kinds(cpu).count("conv2d+add+relu6"), 1u);
}

// The MNIST CNN's two convolutions at batch 32, then a 1x1 one: the first
// (one input channel) is cheap enough to run chained with the second a
// chunk of the batch at a time, but the second runs as Winograd only on
// the whole batch, and reads Winograd's blocked layout, which the first
// then writes directly, and the 1x1 convolution reads and keeps (no
// reorder between them).
TEST(CpuSchedule, WinogradConvIsNotChainedAndItsNeighboursUseItsLayout) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 1, 28, 28});
  int c1 = g.conv(x, 1, 32, {-1, 32, 28, 28}, "relu");
  int c2 = g.conv(c1, 32, 64, {-1, 64, 28, 28}, "relu");
  int c3 = g.conv(c2, 64, 64, {-1, 64, 28, 28}, "relu", 1);
  g.op("max_pool", {c3}, {-1, 64, 14, 14},
       {{"data_format", stringAttr("NCHW")},
        {"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})}},
       /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({32, 1, 28, 28}, 4)};
  RunResult cpu = runPlan(*plan, "cpu", in, 32);
  // Winograd F(4x4, 3x3) rounds to about 5e-6 of the largest output (here
  // sums of 288 products of unscaled random values, up to about 30).
  expectSame(*plan, in, 32, cpu, 1e-3f);
  std::vector<std::string> implementations;
  for (const OpProfile &p : cpu.profiles)
    if (p.kind.rfind("conv2d", 0) == 0)
      implementations.push_back(p.kind + " " + p.implementation);
  // oneDNN's Winograd kernel decides the layouts; gopt's tiled kernel runs
  // it in them (WinogradConvTest.cpp).
  EXPECT_EQ(implementations,
            (std::vector<std::string>{"conv2d onednn", "conv2d winograd-tiled",
                                      "conv2d onednn"}));
  // Only the pooled result is reordered, into the output's plain layout.
  EXPECT_EQ(kinds(cpu).count("reorder"), 1u);
}

// RegNet's 1x1 convolution and grouped 3x3 one (8 channels per group) at
// batch 16: cheap enough to chain, but oneDNN has only its reference
// kernel for the grouped one reading the 1x1's NHWC result (RegNet ran 11x
// slower so), so they run unchained, each in the layouts it picks.
TEST(CpuSchedule, ConvolutionsAreNotChainedOntoAReferenceKernel) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 48, 28, 28});
  int a = g.conv(x, 48, 48, {-1, 48, 28, 28}, "relu", 1);
  int w = g.b.addConstant("grouped", randomF32({48, 8, 3, 3}, 11));
  int y = g.b.addOutput("y", F32, {-1, 48, 28, 28});
  AttrMap attrs = convAttrs("relu");
  attrs["groups"] = intAttr(6);
  g.b.addOp("conv2d", "grouped_conv", {a, w}, {y}, attrs);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({16, 48, 28, 28}, 12)};
  RunResult cpu = runPlan(*plan, "cpu", in, 16);
  expectSame(*plan, in, 16, cpu);
  EXPECT_EQ(kinds(cpu).count("conv2d+conv2d"), 0u);
  EXPECT_EQ(kinds(cpu).count("conv2d"), 2u);
}

// A DenseNet layer: concat(block input, conv features) -> batch_norm ->
// relu -> conv. The concat runs on the features' blocked layout (the block
// input is reordered into it once), and the relu in the batch norm's pass.
TEST(CpuSchedule, DenseBlockStaysBlocked) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 32, 14, 14});
  int f1 = g.conv(x, 32, 16, {-1, 16, 14, 14}, "relu");
  int f2 = g.conv(f1, 16, 16, {-1, 16, 14, 14}, "relu");
  int cat =
      g.op("concat", {x, f1, f2}, {-1, 64, 14, 14}, {{"axis", intAttr(1)}});
  std::vector<int> stats = g.batchNormStats(64, 60);
  int bn =
      g.op("batch_norm", {cat, stats[0], stats[1], stats[2], stats[3]},
           {-1, 64, 14, 14},
           {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-5)}});
  int r = g.op("relu", {bn}, {-1, 64, 14, 14});
  int y = g.b.addOutput("y", F32, {-1, 32, 14, 14});
  int w = g.b.addConstant("w1x1", randomF32({32, 64, 1, 1}, 70));
  g.b.addOp("conv2d", "conv1x1", {r, w}, {y}, convAttrs("none", 1, 0));
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({2, 32, 14, 14}, 5)};
  RunResult cpu = runPlan(*plan, "cpu", in, 2);
  expectSame(*plan, in, 2, cpu);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("batch_norm+relu"), 1u);
  EXPECT_EQ(k.count("relu"), 0u);
  for (const OpProfile &p : cpu.profiles)
    if (p.kind == "concat") {
      EXPECT_EQ(p.implementation, "onednn");
    }
  // The graph input into the blocked layout (once), the result out of it.
  EXPECT_LE(k.count("reorder"), 2u);
}

// A SqueezeNet fire module: squeeze 1x1 conv, then a 1x1 conv (relu as an
// op of its own) and a 3x3 conv (relu as the conv's activation) whose
// results are concatenated and read by a max pool and a 1x1 conv. Both
// expand convolutions write into the concat's destination (the 3x3 image
// by image, the 1x1 at batch 3 all images at once), and no concat step
// runs.
TEST(CpuSchedule, FireModuleConvolutionsWriteIntoTheirConcat) {
  for (int64_t batch : {1, 3}) {
    Graph g;
    int x = g.b.addInput("x", F32, {-1, 24, 13, 13});
    int sq = g.conv(x, 24, 16, {-1, 16, 13, 13}, "relu", 1);
    int e1 = g.conv(sq, 16, 32, {-1, 32, 13, 13}, "none", 1);
    int r1 = g.op("relu", {e1}, {-1, 32, 13, 13});
    int e3 = g.conv(sq, 16, 48, {-1, 48, 13, 13}, "relu", 3);
    // At batch 3 the concat is also a graph result (its plain copy).
    int cat = g.op("concat", {r1, e3}, {-1, 80, 13, 13}, {{"axis", intAttr(1)}},
                   /*output=*/batch == 3);
    g.op("max_pool", {cat}, {-1, 80, 6, 6},
         {{"data_format", stringAttr("NCHW")},
          {"kernel", intsAttr({3, 3})},
          {"strides", intsAttr({2, 2})},
          {"pads", intsAttr({0, 1, 0, 1})}},
         /*output=*/true);
    int y = g.b.addOutput("y", F32, {-1, 16, 13, 13});
    int w = g.b.addConstant("w_next", randomF32({16, 80, 1, 1}, 81));
    g.b.addOp("conv2d", "next_squeeze", {cat, w}, {y}, convAttrs("relu", 1, 0));
    auto plan = g.b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    std::vector<Tensor> in = {randomF32({batch, 24, 13, 13}, 6)};
    RunResult cpu = runPlan(*plan, "cpu", in, batch);
    expectSame(*plan, in, batch, cpu);
    // oneDNN writes nChw16c with JIT kernels only on AVX-512 CPUs; without,
    // the concat copies (checked above to be right all the same).
    if (cpuBf16Support() == Bf16Support::kReference)
      continue;
    std::multiset<std::string> k = kinds(cpu);
    EXPECT_EQ(k.count("concat"), 0u) << "batch " << batch;
    EXPECT_EQ(k.count("relu"), 0u);
    EXPECT_EQ(k.count("conv2d+relu+concat"), 1u);
    EXPECT_EQ(k.count("conv2d+concat"), 1u);
    for (const OpProfile &p : cpu.profiles)
      if (p.kind.find("+concat") != std::string::npos) {
        EXPECT_NE(p.implementation.find("into-concat"), std::string::npos)
            << p.implementation;
        // Several images' 1x1 convolution runs on gopt's 1x1 kernel, all
        // images in one call; one image's on oneDNN's.
        if (p.kind == "conv2d+relu+concat")
          EXPECT_EQ(p.implementation, batch > 1 ? "gopt-1x1-f32-into-concat"
                                                : "onednn-into-concat");
      }
  }
}

// Where writing in place would be wrong or impossible the concat copies:
// a source read by another op too (a graph output), a source that is the
// graph's input, one tensor concatenated twice, channels that are not whole
// blocks of 16 (the second source would start mid-block), and a concat
// along another axis. All compute what the reference computes.
TEST(CpuSchedule, ConcatCopiesWhereSourcesCannotWriteInPlace) {
  struct Case {
    const char *name;
    int64_t channels; // of the second conv's result
    bool sourceAlsoOutput, inputSource, sameTwice, heightAxis;
  };
  for (const Case &c : std::vector<Case>{
           {"source also an output", 32, true, false, false, false},
           {"graph input source", 32, false, true, false, false},
           {"same source twice", 32, false, false, true, false},
           {"24 channels", 24, false, false, false, false},
           {"height axis", 32, false, false, false, true}}) {
    Graph g;
    int x = g.b.addInput("x", F32, {-1, 16, 9, 9});
    int a = g.conv(x, 16, c.channels, {-1, c.channels, 9, 9}, "relu", 1);
    int b = g.conv(x, 16, 32, {-1, 32, 9, 9}, "relu", 3);
    if (c.sourceAlsoOutput)
      g.op("relu", {a}, {-1, c.channels, 9, 9}, {}, /*output=*/true);
    int first = c.inputSource ? x : a;
    int second = c.sameTwice ? a : b;
    int64_t firstChannels = c.inputSource ? 16 : c.channels;
    int64_t secondChannels = c.sameTwice ? c.channels : 32;
    if (c.sameTwice) // b must still be read
      g.op("relu", {b}, {-1, 32, 9, 9}, {}, /*output=*/true);
    Shape catShape = c.heightAxis
                         ? Shape{-1, c.channels, 18, 9}
                         : Shape{-1, firstChannels + secondChannels, 9, 9};
    if (c.heightAxis)
      second = g.conv(x, 16, c.channels, {-1, c.channels, 9, 9}, "relu", 1);
    g.op("concat", {first, second}, catShape,
         {{"axis", intAttr(c.heightAxis ? 2 : 1)}}, /*output=*/true);
    auto plan = g.b.build();
    ASSERT_TRUE(plan.ok()) << c.name << ": " << plan.status().toString();
    std::vector<Tensor> in = {randomF32({3, 16, 9, 9}, 7)};
    RunResult cpu = runPlan(*plan, "cpu", in, 3);
    expectSame(*plan, in, 3, cpu);
    EXPECT_EQ(kinds(cpu).count("concat"), 1u) << c.name;
  }
}

// A SqueezeNet-like stem: the first convolution reads the RGB image as it
// is (no reorder of the input) and writes nChw16c, which the max pool and
// the convolution after it keep; with a batch norm after the first
// convolution (DenseNet's stem) oneDNN picks the layouts as before. Both
// compute what the reference computes.
TEST(CpuSchedule, StemConvolutionReadsThePlainImage) {
  for (bool batchNorm : {false, true}) {
    Graph g;
    int x = g.b.addInput("x", F32, {-1, 3, 31, 31});
    int c0 =
        g.conv(x, 3, 32, {-1, 32, 16, 16}, batchNorm ? "none" : "relu", 3, 2);
    if (batchNorm) {
      std::vector<int> stats = g.batchNormStats(32, 90);
      c0 = g.op(
          "batch_norm", {c0, stats[0], stats[1], stats[2], stats[3]},
          {-1, 32, 16, 16},
          {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-5)}});
      c0 = g.op("relu", {c0}, {-1, 32, 16, 16});
    }
    int p0 = g.op("max_pool", {c0}, {-1, 32, 8, 8},
                  {{"data_format", stringAttr("NCHW")},
                   {"kernel", intsAttr({3, 3})},
                   {"strides", intsAttr({2, 2})},
                   {"pads", intsAttr({1, 1, 1, 1})}});
    int y = g.b.addOutput("y", F32, {-1, 16, 8, 8});
    int w = g.b.addConstant("w_after", randomF32({16, 32, 1, 1}, 91));
    g.b.addOp("conv2d", "after_pool", {p0, w}, {y}, convAttrs("relu", 1, 0));
    auto plan = g.b.build();
    ASSERT_TRUE(plan.ok()) << plan.status().toString();
    std::vector<Tensor> in = {randomF32({3, 3, 31, 31}, 8)};
    RunResult cpu = runPlan(*plan, "cpu", in, 3);
    expectSame(*plan, in, 3, cpu);
    if (batchNorm || cpuBf16Support() == Bf16Support::kReference)
      continue;
    for (const OpProfile &p : cpu.profiles)
      EXPECT_NE(p.name, "reorder:x");
    // Only the result goes back to the plain layout.
    EXPECT_EQ(kinds(cpu).count("reorder"), 1u);
  }
}

// ResNet-18's stem at batch 1: the 7x7 convolution reads the plain image
// and writes nChw16c, the pool keeps it, and the Winograd block after it
// and its residual sum read it as it is: no reorder but the result's.
TEST(CpuSchedule, StemBeforeAWinogradBlockStaysBlocked) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 3, 32, 32});
  int c0 = g.conv(x, 3, 64, {-1, 64, 16, 16}, "relu", 7, 2);
  int p0 = g.op("max_pool", {c0}, {-1, 64, 8, 8},
                {{"data_format", stringAttr("NCHW")},
                 {"kernel", intsAttr({3, 3})},
                 {"strides", intsAttr({2, 2})},
                 {"pads", intsAttr({1, 1, 1, 1})}});
  int a1 = g.conv(p0, 64, 64, {-1, 64, 8, 8}, "relu");
  int a2 = g.conv(a1, 64, 64, {-1, 64, 8, 8});
  int s1 = g.op("add", {a2, p0}, {-1, 64, 8, 8});
  g.op("relu", {s1}, {-1, 64, 8, 8}, {}, /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({1, 3, 32, 32}, 9)};
  for (bool on : {true, false}) {
    if (!on)
      setenv("GOPT_CONV_STEM_BLOCKED", "0", 1);
    RunResult cpu = runPlan(*plan, "cpu", in, 1);
    unsetenv("GOPT_CONV_STEM_BLOCKED");
    // Winograd's rounding: relative to the result's size (|y| ~ 100).
    RunResult ref = runPlan(*plan, "reference", in, 1);
    ASSERT_EQ(ref.outputs.size(), 1u);
    float largest = 0;
    const Tensor &y = ref.outputs[0];
    for (int64_t i = 0; i < y.numElements(); ++i)
      largest = std::max(largest, std::abs(y.data<float>()[i]));
    EXPECT_LT(maxAbsDiff(y, cpu.outputs[0]), 2e-6f * largest) << largest;
    bool winograd = false;
    for (const OpProfile &p : cpu.profiles)
      winograd |= p.implementation == "onednn-winograd";
    if (!winograd) // no AVX-512 Winograd kernel: nothing to keep blocked
      continue;
    bool imageReordered = false;
    for (const OpProfile &p : cpu.profiles)
      imageReordered |= p.name == "reorder:x";
    EXPECT_EQ(imageReordered, !on);
    if (on) // only the result goes back to the plain layout
      EXPECT_EQ(kinds(cpu).count("reorder"), 1u);
  }
}

// ResNet-50's stem and first bottleneck at batch 1, with a wide 1x1
// convolution after it: the 1x1 convolutions read the nChw16c that the
// Winograd one and the stem leave, the downsample included, so nothing is
// reordered but the image (none: the stem reads it) and the result. With
// GOPT_CONV_BLOCKED_POINTWISE=0 the wide 1x1 reads NHWC as before.
TEST(CpuSchedule, PointwiseConvolutionsKeepTheBlockedLayout) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 3, 32, 32});
  int c0 = g.conv(x, 3, 64, {-1, 64, 16, 16}, "relu", 7, 2);
  int p0 = g.op("max_pool", {c0}, {-1, 64, 8, 8},
                {{"data_format", stringAttr("NCHW")},
                 {"kernel", intsAttr({3, 3})},
                 {"strides", intsAttr({2, 2})},
                 {"pads", intsAttr({1, 1, 1, 1})}});
  int a1 = g.conv(p0, 64, 64, {-1, 64, 8, 8}, "relu", 1);
  int a2 = g.conv(a1, 64, 64, {-1, 64, 8, 8}, "relu", 3);
  int a3 = g.conv(a2, 64, 256, {-1, 256, 8, 8}, "none", 1);
  int d = g.conv(p0, 64, 256, {-1, 256, 8, 8}, "none", 1);
  int s1 = g.op("add", {a3, d}, {-1, 256, 8, 8});
  int o1 = g.op("relu", {s1}, {-1, 256, 8, 8});
  int c5 = g.conv(o1, 256, 128, {-1, 128, 8, 8}, "none", 1);
  g.op("relu", {c5}, {-1, 128, 8, 8}, {}, /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({1, 3, 32, 32}, 19)};
  RunResult ref = runPlan(*plan, "reference", in, 1);
  ASSERT_EQ(ref.outputs.size(), 1u);
  float largest = 0;
  for (int64_t i = 0; i < ref.outputs[0].numElements(); ++i)
    largest = std::max(largest, std::abs(ref.outputs[0].data<float>()[i]));
  for (bool on : {true, false}) {
    if (!on)
      setenv("GOPT_CONV_BLOCKED_POINTWISE", "0", 1);
    RunResult cpu = runPlan(*plan, "cpu", in, 1);
    unsetenv("GOPT_CONV_BLOCKED_POINTWISE");
    ASSERT_EQ(cpu.outputs.size(), 1u);
    EXPECT_LT(maxAbsDiff(ref.outputs[0], cpu.outputs[0]), 2e-6f * largest)
        << largest;
    bool winograd = false;
    for (const OpProfile &p : cpu.profiles)
      winograd |= p.implementation == "onednn-winograd";
    if (!winograd) // no AVX-512 Winograd kernel: nothing to keep blocked
      continue;
    if (on)
      EXPECT_EQ(kinds(cpu).count("reorder"), 1u);
    else
      EXPECT_GT(kinds(cpu).count("reorder"), 1u);
  }
}

TEST(CpuSchedule, ResolvesAgainForANewBatch) {
  Plan plan = resnetLike(false);
  SessionOptions options;
  options.threads = 2;
  options.batchSize = 2;
  auto session = Session::create(plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  for (int64_t batch : {2, 5, 1}) {
    Tensor x = randomF32({batch, 3, 16, 16}, 9 + batch);
    ASSERT_TRUE((*session)->setInput("x", x).ok());
    ASSERT_TRUE((*session)->run().ok());
    Tensor cpu = (*session)->output((*session)->outputs()[0].name)->clone();
    RunResult ref = runPlan(plan, "reference", {x}, batch);
    EXPECT_LT(maxAbsDiff(ref.outputs[0], cpu), 2e-4f) << "batch " << batch;
  }
}

// A MobileNetV2 block (expand 1x1, depthwise 3x3, project 1x1, residual
// add of the block's input) whose expanded image (2.25 MiB) makes it a
// chain run one image at a time by bands of rows. With two threads each
// runs its own images through its own copy of the chain ("-images"): 8
// images split 4 and 4, 9 images 4 and 5; with GOPT_CHAIN_PARALLEL_IMAGES=0
// the threads share each oneDNN call instead. The residual is not summed
// in place into the chain's source: a band reads halo rows of the source
// that the band before it wrote. Every way computes what the reference
// backend computes.
TEST(CpuSchedule, ConvChainRunsImagesOnThreadsOfTheirOwn) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 8, 96, 96});
  int e = g.conv(x, 8, 64, {-1, 64, 96, 96}, "relu6", 1);
  int w = g.b.addConstant("depthwise", randomF32({64, 1, 3, 3}, 21));
  int d = g.b.addIntermediate("d", F32, {-1, 64, 96, 96});
  AttrMap attrs = convAttrs("relu6");
  attrs["groups"] = intAttr(64);
  g.b.addOp("conv2d", "depthwise_conv", {e, w}, {d}, attrs);
  int p = g.conv(d, 64, 8, {-1, 8, 96, 96}, "none", 1);
  g.op("add", {p, x}, {-1, 8, 96, 96}, {}, /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  for (const char *parallel : {"1", "0"})
    for (int64_t batch : {8, 9}) {
      setenv("GOPT_CHAIN_PARALLEL_IMAGES", parallel, 1);
      std::vector<Tensor> in = {randomF32({batch, 8, 96, 96}, 22)};
      RunResult cpu = runPlan(*plan, "cpu", in, batch);
      unsetenv("GOPT_CHAIN_PARALLEL_IMAGES");
      expectSame(*plan, in, batch, cpu);
      std::string chain;
      for (const OpProfile &p : cpu.profiles)
        if (p.kind == "conv2d+conv2d+conv2d+add")
          chain = p.implementation;
      // The depthwise stage runs gopt's f32 kernel ("-dw") where it can.
      const std::string dw =
          gopt::runtime::cpu::depthwiseF32Enabled() ? "-dw" : "";
      EXPECT_EQ(chain, parallel[0] == '1' ? "onednn-rows" + dw + "-images"
                                          : "onednn-rows" + dw)
          << "batch " << batch;
    }
}

// ResNet-50's stride-2 bottleneck at batch 8 (1x1 -> 3x3 stride 2 -> 1x1,
// a strided 1x1 downsample, the sum, relu): cheap enough per element and
// large enough to chain, but an f32 chain of dense convolutions only ran
// no faster than its convolutions one by one and cost reorders to and from
// its NHWC, so it runs unchained unless GOPT_CONV_CHAIN_F32_NEEDS_GROUPED=0.
TEST(CpuSchedule, DenseF32ConvolutionsAreNotChained) {
  Graph g;
  int x = g.b.addInput("x", F32, {-1, 64, 56, 56});
  int a = g.conv(x, 64, 32, {-1, 32, 56, 56}, "relu", 1);
  int b = g.conv(a, 32, 32, {-1, 32, 28, 28}, "relu", 3, 2);
  int c = g.conv(b, 32, 128, {-1, 128, 28, 28}, "none", 1);
  int d = g.conv(x, 64, 128, {-1, 128, 28, 28}, "none", 1, 2);
  int s = g.op("add", {c, d}, {-1, 128, 28, 28});
  g.op("relu", {s}, {-1, 128, 28, 28}, {}, /*output=*/true);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({8, 64, 56, 56}, 31)};
  for (const char *needGrouped : {"1", "0"}) {
    setenv("GOPT_CONV_CHAIN_F32_NEEDS_GROUPED", needGrouped, 1);
    RunResult cpu = runPlan(*plan, "cpu", in, 8);
    unsetenv("GOPT_CONV_CHAIN_F32_NEEDS_GROUPED");
    expectSame(*plan, in, 8, cpu);
    int chained = 0;
    for (const OpProfile &p : cpu.profiles)
      chained += p.kind.rfind("conv2d+conv2d", 0) == 0;
    EXPECT_EQ(chained, needGrouped[0] == '1' ? 0 : 1) << needGrouped;
  }
}

} // namespace

namespace {

// The chain's profile row ("" if none) and whether the result matches the
// reference backend, with the session on `threads` threads.
std::pair<std::string, float> runBatchOneChain(const Plan &plan,
                                               const Tensor &in, int threads) {
  SessionOptions options;
  options.backend = "cpu";
  options.threads = threads;
  auto session = Session::create(plan, options);
  EXPECT_TRUE(session.ok()) << session.status().toString();
  if (!session.ok())
    return {"", 1e9f};
  EXPECT_TRUE((*session)->setInput("x", in).ok());
  EXPECT_TRUE((*session)->run().ok());
  std::string chain;
  for (const OpProfile &p : (*session)->opProfiles())
    if (p.implementation.rfind("onednn-rows", 0) == 0)
      chain = p.implementation;
  const std::string out = (*session)->outputs()[0].name;
  RunResult ref = runPlan(plan, "reference", {in});
  if (ref.outputs.size() != 1)
    return {chain, 1e9f};
  return {chain, maxAbsDiff(ref.outputs[0], *(*session)->output(out))};
}

// EfficientNet-B0's first expanded block at batch 1 (16 -> 96 at 112x112,
// SiLU, then a 3x3 stride-2 depthwise): its 4.8 MB intermediate makes it a
// banded chain at one thread, but not at two, where each band's small
// calls forked and joined for every stage (GOPT_CONV_CHAIN_BATCH1_ONE_
// THREAD=0: banded at two as well). Each way matches the reference.
TEST(CpuSchedule, BatchOneBandedChainOnlyOnOneThread) {
  Graph g;
  int x = g.b.addInput("x", F32, {1, 16, 112, 112});
  int e = g.conv(x, 16, 96, {1, 96, 112, 112}, "none", 1);
  int s = g.op("sigmoid", {e}, {1, 96, 112, 112});
  int m = g.op("mul", {e, s}, {1, 96, 112, 112});
  int w = g.b.addConstant("depthwise", randomF32({96, 1, 3, 3}, 23));
  int d = g.b.addOutput("d", F32, {1, 96, 56, 56});
  AttrMap attrs = convAttrs("relu", 2);
  attrs["groups"] = intAttr(96);
  g.b.addOp("conv2d", "depthwise_conv", {m, w}, {d}, attrs);
  auto plan = g.b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor in = randomF32({1, 16, 112, 112}, 24);
  auto one = runBatchOneChain(*plan, in, 1);
  EXPECT_NE(one.first, "");
  EXPECT_LT(one.second, 2e-4f);
  auto two = runBatchOneChain(*plan, in, 2);
  EXPECT_EQ(two.first, "");
  EXPECT_LT(two.second, 2e-4f);
  setenv("GOPT_CONV_CHAIN_BATCH1_ONE_THREAD", "0", 1);
  auto any = runBatchOneChain(*plan, in, 2);
  unsetenv("GOPT_CONV_CHAIN_BATCH1_ONE_THREAD");
  EXPECT_NE(any.first, "");
  EXPECT_LT(any.second, 2e-4f);
}

} // namespace
