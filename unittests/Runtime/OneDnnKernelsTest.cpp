//===- OneDnnKernelsTest.cpp - oneDNN kernels vs. the reference -----------===//
#include "../../runtime/src/cpu/OneDnn.h"
#include "TestUtil.h"

#include <cstdlib>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

// Runs the op on "reference" and on "cpu", checks which implementation
// "cpu" picked and that both agree.
void compareBackends(const std::string &kind, const AttrMap &attrs,
                     const std::vector<Tensor> &inputs, const OutSpec &out,
                     const std::vector<int> &constants = {},
                     const char *expectedImpl = "onednn", float tol = 1e-4f) {
  // Twice: the second run must not depend on state left by the first.
  BackendPair r = runOnBothBackends(kind, attrs, inputs, out, constants, 2);
  EXPECT_EQ(r.cpuImplementation, expectedImpl);
  EXPECT_LT(maxAbsDiff(r.reference, r.cpu), tol);
}

TEST(OneDnnConv, NhwcSameBiasReluConstantWeights) {
  compareBackends(
      "conv2d",
      {{"padding", stringAttr("SAME")}, {"activation", stringAttr("relu")}},
      {randomF32({2, 7, 9, 5}, 1), randomF32({3, 3, 5, 8}, 2),
       randomF32({8}, 3)},
      {F32, {2, 7, 9, 8}}, {1, 2});
}

// 3x3 stride-1 convolutions with channels in blocks of 16 and enough work
// run as Winograd F(4x4, 3x3), fused residual add and relu included; its
// rounding differs from the direct convolution's by about 1e-6 of the
// result's scale. GOPT_CONV_WINOGRAD=0 keeps the direct kernel; one input
// channel (padded to 16, it was 5x slower) and a filter that is no
// constant never take Winograd.
TEST(OneDnnConv, WinogradFor3x3StrideOne) {
  std::vector<Tensor> inputs = {randomF32({16, 32, 14, 14}, 4),
                                randomF32({32, 32, 3, 3}, 5),
                                randomF32({32}, 6)};
  AttrMap attrs = {{"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")},
                   {"padding", stringAttr("SAME")},
                   {"activation", stringAttr("relu")}};
  compareBackends("conv2d", attrs, inputs, {F32, {16, 32, 14, 14}}, {1, 2},
                  "onednn-winograd", 1e-3f);
  setenv("GOPT_CONV_WINOGRAD", "0", 1);
  compareBackends("conv2d", attrs, inputs, {F32, {16, 32, 14, 14}}, {1, 2},
                  "onednn", 1e-3f);
  unsetenv("GOPT_CONV_WINOGRAD");
  compareBackends("conv2d", attrs,
                  {randomF32({16, 1, 14, 14}, 7), randomF32({32, 1, 3, 3}, 8),
                   randomF32({32}, 9)},
                  {F32, {16, 32, 14, 14}}, {1, 2}, "onednn", 1e-3f);
  // A filter that is not a constant (training) keeps the direct kernel.
  compareBackends("conv2d", attrs, inputs, {F32, {16, 32, 14, 14}}, {2},
                  "onednn", 1e-3f);
}

// One image: oneDNN has no 4x3 kernel, and its F(2x2, 3x3) one is taken
// while the transformed filter (16 x cin x cout floats) is at most 1 MiB
// (64 x 64 channels here; 1.4-1.6x faster than the direct kernel on
// ResNet-18's 64- and 128-channel layers), within 1e-3 of the reference
// like the 4x3 kernel. A 256 x 256 filter (4 MiB transformed: no faster)
// and GOPT_CONV_WINOGRAD=4x3 keep oneDNN's direct kernel (the former runs
// gopt's own Winograd kernel unless GOPT_CONV_WINOGRAD_WIDE=0: see
// WinogradConvTest.cpp).
TEST(OneDnnConv, Winograd2x3ForOneImageWithASmallFilter) {
  AttrMap attrs = {{"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")},
                   {"padding", stringAttr("SAME")},
                   {"activation", stringAttr("relu")}};
  std::vector<Tensor> small = {randomF32({1, 64, 28, 28}, 10),
                               randomF32({64, 64, 3, 3}, 11),
                               randomF32({64}, 12)};
  // By default gopt's tiled Winograd kernel runs it in oneDNN's layouts
  // (WinogradConvTest.cpp).
  compareBackends("conv2d", attrs, small, {F32, {1, 64, 28, 28}}, {1, 2},
                  "winograd-tiled", 1e-3f);
  setenv("GOPT_CONV_WINOGRAD_TILED", "0", 1);
  compareBackends("conv2d", attrs, small, {F32, {1, 64, 28, 28}}, {1, 2},
                  "onednn-winograd", 1e-3f);
  setenv("GOPT_CONV_WINOGRAD", "4x3", 1);
  compareBackends("conv2d", attrs, small, {F32, {1, 64, 28, 28}}, {1, 2},
                  "onednn", 1e-3f);
  unsetenv("GOPT_CONV_WINOGRAD");
  setenv("GOPT_CONV_WINOGRAD_WIDE", "0", 1);
  compareBackends("conv2d", attrs,
                  {randomF32({1, 256, 14, 14}, 13),
                   randomF32({256, 256, 3, 3}, 14), randomF32({256}, 15)},
                  {F32, {1, 256, 14, 14}}, {1, 2}, "onednn", 1e-3f);
  unsetenv("GOPT_CONV_WINOGRAD_WIDE");
  unsetenv("GOPT_CONV_WINOGRAD_TILED");
}

// Fewer than 64 output channels on an image over 64x64 (Inception-v3's
// 32 -> 32 channels at 149x149) keep the direct kernel: Winograd's
// transforms outweighed the multiplications it saves there (1.5x slower at
// batch 8). GOPT_CONV_WINOGRAD_NARROW=1 takes Winograd anyway; 64 output
// channels at that size still take it.
TEST(OneDnnConv, NoWinogradForFewOutputChannelsOnLargeImages) {
  AttrMap attrs = {{"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")},
                   {"padding", stringAttr("SAME")},
                   {"activation", stringAttr("relu")}};
  std::vector<Tensor> narrow = {randomF32({4, 16, 65, 65}, 40),
                                randomF32({32, 16, 3, 3}, 41),
                                randomF32({32}, 42)};
  compareBackends("conv2d", attrs, narrow, {F32, {4, 32, 65, 65}}, {1, 2},
                  "onednn", 1e-3f);
  setenv("GOPT_CONV_WINOGRAD_NARROW", "1", 1);
  compareBackends("conv2d", attrs, narrow, {F32, {4, 32, 65, 65}}, {1, 2},
                  "onednn-winograd", 1e-3f);
  unsetenv("GOPT_CONV_WINOGRAD_NARROW");
  // (Run by gopt's tiled Winograd kernel in oneDNN's layouts.)
  compareBackends("conv2d", attrs,
                  {randomF32({4, 16, 65, 65}, 43),
                   randomF32({64, 16, 3, 3}, 44), randomF32({64}, 45)},
                  {F32, {4, 64, 65, 65}}, {1, 2}, "winograd-tiled", 1e-3f);
}

TEST(OneDnnConv, NchwStridedDilatedVariableWeights) {
  compareBackends("conv2d",
                  {{"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")},
                   {"strides", intsAttr({2, 2})},
                   {"dilations", intsAttr({2, 1})},
                   {"pads", intsAttr({1, 2, 0, 1})}},
                  {randomF32({1, 4, 11, 10}, 4), randomF32({6, 4, 3, 3}, 5)},
                  {F32, {1, 6, 5, 5}});
}

TEST(OneDnnConv, GroupedHwio) {
  compareBackends("conv2d",
                  {{"groups", intAttr(2)}, {"activation", stringAttr("relu6")}},
                  {randomF32({2, 6, 6, 4}, 6), randomF32({3, 3, 2, 6}, 7),
                   randomF32({6}, 8)},
                  {F32, {2, 4, 4, 6}}, {1});
}

TEST(OneDnnConv, DepthwiseNchwSigmoid) {
  compareBackends("conv2d",
                  {{"groups", intAttr(8)},
                   {"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")},
                   {"padding", stringAttr("SAME")},
                   {"activation", stringAttr("sigmoid")}},
                  {randomF32({1, 8, 9, 9}, 9), randomF32({8, 1, 3, 3}, 10),
                   randomF32({8}, 11)},
                  {F32, {1, 8, 9, 9}}, {1, 2});
}

TEST(OneDnnMatmul, Plain) {
  compareBackends("matmul", {}, {randomF32({5, 7}, 1), randomF32({7, 3}, 2)},
                  {F32, {5, 3}}, {1});
}

// A classifier's GEMV: one row against constant weights stored [N, K]
// (ONNX Gemm transB = 1), packed once into oneDNN's layout (or gopt's
// GemvF32's, GemvF32Test.cpp); run twice by compareBackends, so the packed
// copy must persist.
TEST(OneDnnMatmul, GemvConstantTransposedWeights) {
  compareBackends("matmul", {{"transpose_b", boolAttr(true)}},
                  {randomF32({1, 300}, 9), randomF32({64, 300}, 10)},
                  {F32, {1, 64}}, {1}, "gopt-gemv-f32");
  setenv("GOPT_GEMV_F32", "0", 1);
  compareBackends("matmul", {{"transpose_b", boolAttr(true)}},
                  {randomF32({1, 300}, 9), randomF32({64, 300}, 10)},
                  {F32, {1, 64}}, {1});
  unsetenv("GOPT_GEMV_F32");
  compareBackends("matmul", {},
                  {randomF32({3, 300}, 11), randomF32({300, 40}, 12)},
                  {F32, {3, 40}}, {1});
}

TEST(OneDnnMatmul, Transposes) {
  compareBackends(
      "matmul",
      {{"transpose_a", boolAttr(true)}, {"transpose_b", boolAttr(true)}},
      {randomF32({2, 7, 5}, 3), randomF32({2, 3, 7}, 4)}, {F32, {2, 5, 3}});
}

TEST(OneDnnMatmul, BatchBroadcast) {
  compareBackends("matmul", {},
                  {randomF32({2, 1, 3, 4}, 5), randomF32({3, 4, 6}, 6)},
                  {F32, {2, 3, 3, 6}});
  compareBackends("matmul", {{"transpose_b", boolAttr(true)}},
                  {randomF32({4, 2, 8}, 7), randomF32({5, 8}, 8)},
                  {F32, {4, 2, 5}}, {1});
}

TEST(OneDnnPool, MaxWithPadding) {
  compareBackends("max_pool",
                  {{"kernel", intsAttr({3, 3})},
                   {"strides", intsAttr({2, 2})},
                   {"pads", intsAttr({1, 1, 1, 1})}},
                  {randomF32({2, 9, 9, 3}, 1)}, {F32, {2, 5, 5, 3}});
}

TEST(OneDnnPool, AvgExcludeAndIncludePadNchw) {
  AttrMap attrs = {{"kernel", intsAttr({3, 3})},
                   {"pads", intsAttr({1, 1, 1, 1})},
                   {"data_format", stringAttr("NCHW")}};
  compareBackends("avg_pool", attrs, {randomF32({1, 4, 6, 6}, 2)},
                  {F32, {1, 4, 6, 6}});
  attrs["count_include_pad"] = boolAttr(true);
  compareBackends("avg_pool", attrs, {randomF32({1, 4, 6, 6}, 3)},
                  {F32, {1, 4, 6, 6}});
}

TEST(OneDnnPool, CeilMode) {
  AttrMap attrs = {{"kernel", intsAttr({2, 2})},
                   {"strides", intsAttr({2, 2})},
                   {"ceil_mode", boolAttr(true)}};
  compareBackends("max_pool", attrs, {randomF32({1, 7, 7, 2}, 4)},
                  {F32, {1, 4, 4, 2}});
  compareBackends("avg_pool", attrs, {randomF32({1, 7, 7, 2}, 5)},
                  {F32, {1, 4, 4, 2}});
  // Counting the ceil_mode area would be wrong: the reference runs.
  attrs["count_include_pad"] = boolAttr(true);
  compareBackends("avg_pool", attrs, {randomF32({1, 7, 7, 2}, 6)},
                  {F32, {1, 4, 4, 2}}, {}, "reference");
}

TEST(OneDnnPool, SamePadding) {
  compareBackends("avg_pool",
                  {{"kernel", intsAttr({3, 3})},
                   {"strides", intsAttr({2, 2})},
                   {"padding", stringAttr("SAME")}},
                  {randomF32({2, 8, 8, 4}, 7)}, {F32, {2, 4, 4, 4}});
}

std::vector<Tensor> bnInputs(const Shape &x, int64_t c, uint32_t seed) {
  Tensor var = randomF32({c}, seed + 4);
  for (int64_t i = 0; i < c; ++i)
    var.data<float>()[i] = std::abs(var.data<float>()[i]) + 0.5f;
  return {randomF32(x, seed), randomF32({c}, seed + 1),
          randomF32({c}, seed + 2), randomF32({c}, seed + 3), var};
}

TEST(OneDnnBatchNorm, Layouts) {
  compareBackends("batch_norm", {}, bnInputs({2, 5, 5, 6}, 6, 1),
                  {F32, {2, 5, 5, 6}}, {1, 2, 3, 4});
  compareBackends(
      "batch_norm",
      {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-5)}},
      bnInputs({2, 6, 5, 5}, 6, 2), {F32, {2, 6, 5, 5}});
  compareBackends("batch_norm", {}, bnInputs({7, 3}, 3, 3), {F32, {7, 3}});
}

TEST(OneDnnBatchNorm, RankThreeFallsBackToReference) {
  compareBackends("batch_norm", {}, bnInputs({2, 3, 4}, 4, 4), {F32, {2, 3, 4}},
                  {}, "reference");
}

TEST(OneDnn, WorkspaceIsReported) {
  PlanBuilder b("conv");
  int x = b.addInput("x", F32, {1, 8, 8, 16});
  int w = b.addConstant("w", randomF32({3, 3, 16, 16}, 1));
  int y = b.addOutput("y", F32, {1, 8, 8, 16});
  b.addOp("conv2d", "conv", {x, w}, {y}, {{"padding", stringAttr("SAME")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok());
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)->opProfiles()[0].implementation, "onednn");
  EXPECT_GE((*session)->memoryStats().totalBytes(),
            (*session)->memoryStats().constantBytes);
}

// Layouts that place every element at the same byte are one layout to the
// schedule (no reorder between them): a channel block spanning all the
// channels is NHWC, dimensions of one element have no stride; a block that
// splits or pads the channels, another type or other dims are not.
TEST(OneDnnLayout, SameBytes) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  auto md = [](memory::dims d, Tag t,
               memory::data_type type = memory::data_type::f32) {
    return memory::desc(d, type, t);
  };
  using gopt::runtime::cpu::sameBytes;
  EXPECT_TRUE(
      sameBytes(md({1, 16, 5, 7}, Tag::aBcd16b), md({1, 16, 5, 7}, Tag::nhwc)));
  EXPECT_TRUE(
      sameBytes(md({3, 16, 5, 7}, Tag::nhwc), md({3, 16, 5, 7}, Tag::aBcd16b)));
  EXPECT_TRUE(
      sameBytes(md({2, 8, 4, 4}, Tag::aBcd8b), md({2, 8, 4, 4}, Tag::nhwc)));
  EXPECT_TRUE(
      sameBytes(md({2, 1, 4, 4}, Tag::nchw), md({2, 1, 4, 4}, Tag::nhwc)));
  EXPECT_TRUE(
      sameBytes(md({1, 32, 1, 1}, Tag::nchw), md({1, 32, 1, 1}, Tag::aBcd16b)));
  EXPECT_TRUE(sameBytes(md({2, 32, 3, 3}, Tag::aBcd16b),
                        md({2, 32, 3, 3}, Tag::aBcd16b)));
  EXPECT_FALSE(
      sameBytes(md({1, 32, 5, 7}, Tag::aBcd16b), md({1, 32, 5, 7}, Tag::nhwc)));
  EXPECT_FALSE(
      sameBytes(md({1, 12, 5, 7}, Tag::aBcd16b), md({1, 12, 5, 7}, Tag::nhwc)));
  EXPECT_FALSE(
      sameBytes(md({1, 16, 5, 7}, Tag::nchw), md({1, 16, 5, 7}, Tag::nhwc)));
  EXPECT_FALSE(
      sameBytes(md({1, 16, 5, 7}, Tag::aBcd16b),
                md({1, 16, 5, 7}, Tag::nhwc, memory::data_type::bf16)));
  EXPECT_FALSE(
      sameBytes(md({1, 16, 5, 7}, Tag::nhwc), md({1, 16, 7, 5}, Tag::nhwc)));
}

} // namespace
