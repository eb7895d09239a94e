//===- ChunkedMatmulTest.cpp - column-chunked f32 matmul vs. reference ----===//
#include "TestUtil.h"

#include "../../runtime/src/cpu/ChunkedMatmul.h"

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

TEST(ChunkedMatmul, ChunkWidths) {
  const int64_t mib = 1 << 20;
  // ViT-B/16's first MLP matmul at batch 1: 768 x 3072 (9 MiB) in 10
  // chunks of 320. Its second, 3072 x 768, runs whole: A (197 x 3072, 2.4
  // MiB) would be read from L3 for every chunk. ConvNeXt's last stage (49
  // rows) chunks it: 10 of 80 (the last 48); a narrow budget gives chunks
  // of at least 64.
  EXPECT_EQ(cpu::matmulChunkColumns(197, 768, 3072, mib, 256), 320);
  EXPECT_EQ(cpu::matmulChunkColumns(197, 3072, 768, mib, 256), 0);
  EXPECT_EQ(cpu::matmulChunkColumns(49, 3072, 768, mib, 256), 80);
  EXPECT_EQ(cpu::matmulChunkColumns(16, 3072, 768, mib / 4, 256), 64);
  // Weights within 1.5 budgets, too few or too many rows, no budget: one
  // matmul.
  EXPECT_EQ(cpu::matmulChunkColumns(197, 768, 512, mib, 256), 0);
  EXPECT_EQ(cpu::matmulChunkColumns(8, 768, 3072, mib, 256), 0);
  EXPECT_EQ(cpu::matmulChunkColumns(300, 768, 3072, mib, 256), 0);
  EXPECT_EQ(cpu::matmulChunkColumns(197, 768, 3072, 0, 256), 0);
}

// Runs `b` on "reference" and "cpu" with `inputs` fed, checks that a cpu
// step ran on the chunked kernel and both agree.
void compareChunked(PlanBuilder &b, const std::vector<Tensor> &inputs) {
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> results;
  for (const char *backend : {"reference", "cpu"}) {
    SessionOptions options;
    options.backend = backend;
    options.threads = 2;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    for (size_t i = 0; i < inputs.size(); ++i)
      ASSERT_TRUE(
          (*session)->setInput("in" + std::to_string(i), inputs[i]).ok());
    // Twice: the packed chunks must persist, and a residual summed in
    // place must be read fresh.
    ASSERT_TRUE((*session)->run().ok());
    Status second = (*session)->run();
    ASSERT_TRUE(second.ok()) << second.toString();
    if (std::string(backend) == "cpu") {
      bool chunked = false;
      for (const OpProfile &row : (*session)->opProfiles())
        chunked |= row.implementation == std::string("onednn-chunked");
      EXPECT_TRUE(chunked);
    }
    results.push_back((*session)->output("y")->clone());
  }
  EXPECT_LT(maxAbsDiff(results[0], results[1]), 2e-4f);
}

// 300 x 1400 f32 (1.6 MiB) is over 1.5 default budgets: two chunks of 704
// and 696 columns (the last not a whole 16-column block).
TEST(ChunkedMatmul, PlainAndTransposedWeights) {
  for (bool transposeB : {false, true}) {
    PlanBuilder b("m");
    int x = b.addInput("in0", F32, {2, 20, 300});
    int w = b.addConstant(
        "w", randomF32(transposeB ? Shape{1400, 300} : Shape{300, 1400}, 7));
    int y = b.addOutput("y", F32, {2, 20, 1400});
    b.addOp("matmul", "op", {x, w}, {y},
            {{"transpose_b", boolAttr(transposeB)}});
    compareChunked(b, {randomF32({2, 20, 300}, 3)});
  }
}

// A transformer MLP's chain: matmul + bias + residual + gelu as one step,
// each chunk with its slice of the bias and of the residual.
TEST(ChunkedMatmul, BiasResidualGelu) {
  PlanBuilder b("m");
  int x = b.addInput("in0", F32, {40, 300});
  int r = b.addInput("in1", F32, {40, 1400});
  int w = b.addConstant("w", randomF32({300, 1400}, 8));
  int bias = b.addConstant("bias", randomF32({1400}, 9));
  int m = b.addIntermediate("m", F32, {40, 1400});
  int mb = b.addIntermediate("mb", F32, {40, 1400});
  int s = b.addIntermediate("s", F32, {40, 1400});
  int y = b.addOutput("y", F32, {40, 1400});
  b.addOp("matmul", "op", {x, w}, {m});
  b.addOp("add", "bias", {m, bias}, {mb});
  b.addOp("add", "residual", {mb, r}, {s});
  b.addOp("gelu", "gelu", {s}, {y});
  compareChunked(b, {randomF32({40, 300}, 4), randomF32({40, 1400}, 5)});
}

} // namespace
