//===- ShapeInferenceTest.cpp - Shape functions through the C++ API -------===//

#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <limits>

using namespace mlir;
using namespace gopt;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Runs shape functions with a location and records the diagnostics they
/// emit, so tests can check both the shape and the message.
class ShapeInferenceTest : public ::testing::Test {
protected:
  ShapeInferenceTest()
      : handler(&context, [this](Diagnostic &diag) {
          messages.push_back(diag.str());
          return success();
        }) {}

  ShapeError error(StringRef op) {
    return ShapeError(UnknownLoc::get(&context), op);
  }

  std::string lastMessage() const {
    return messages.empty() ? std::string() : messages.back();
  }

  MLIRContext context;
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler;
};

Conv2DParams convParams(StringRef padding, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> pads = {0, 0, 0, 0}) {
  Conv2DParams params;
  params.window.strides.assign(strides.begin(), strides.end());
  params.window.dilations = {1, 1};
  params.window.padding = padding;
  params.window.pads.assign(pads.begin(), pads.end());
  return params;
}

TEST_F(ShapeInferenceTest, Conv2DSamePaddingNHWC) {
  Shape result;
  ASSERT_TRUE(succeeded(inferConv2DShape(
      {1, 224, 224, 3}, {7, 7, 3, 64}, std::nullopt, convParams("SAME", {2, 2}),
      result, error("gopt.conv2d"))));
  EXPECT_EQ(result, (Shape{1, 112, 112, 64}));
}

TEST_F(ShapeInferenceTest, Conv2DExplicitPaddingNCHWWithDynamicBatch) {
  Conv2DParams params = convParams("EXPLICIT", {2, 2}, {3, 3, 3, 3});
  params.dataFormat = "NCHW";
  params.filterFormat = "OIHW";
  Shape result;
  ASSERT_TRUE(succeeded(inferConv2DShape({kDyn, 3, 224, 224}, {64, 3, 7, 7},
                                         ArrayRef<int64_t>{64}, params, result,
                                         error("gopt.conv2d"))));
  EXPECT_EQ(result, (Shape{kDyn, 64, 112, 112}));
}

TEST_F(ShapeInferenceTest, Conv2DValidPaddingWithDilation) {
  Conv2DParams params = convParams("VALID", {1, 1});
  params.window.dilations = {2, 2};
  Shape result;
  ASSERT_TRUE(
      succeeded(inferConv2DShape({1, 10, 10, 4}, {3, 3, 4, 8}, std::nullopt,
                                 params, result, error("gopt.conv2d"))));
  // Effective window 5: 10 - 5 + 1 = 6.
  EXPECT_EQ(result, (Shape{1, 6, 6, 8}));
}

TEST_F(ShapeInferenceTest, DepthwiseConvAsGroups) {
  Conv2DParams params = convParams("SAME", {1, 1});
  params.groups = 32;
  Shape result;
  ASSERT_TRUE(
      succeeded(inferConv2DShape({2, 16, 16, 32}, {3, 3, 1, 32}, std::nullopt,
                                 params, result, error("gopt.conv2d"))));
  EXPECT_EQ(result, (Shape{2, 16, 16, 32}));
}

TEST_F(ShapeInferenceTest, Conv2DChannelMismatchIsDiagnosed) {
  Shape result;
  EXPECT_TRUE(failed(inferConv2DShape({1, 8, 8, 3}, {3, 3, 4, 8}, std::nullopt,
                                      convParams("SAME", {1, 1}), result,
                                      error("gopt.conv2d"))));
  EXPECT_NE(lastMessage().find("'gopt.conv2d' op expects the filter's input "
                               "channels (4) times groups (1) to equal the "
                               "input channels (3)"),
            std::string::npos)
      << lastMessage();
}

TEST_F(ShapeInferenceTest, Conv2DBadDataFormatIsDiagnosed) {
  Conv2DParams params = convParams("SAME", {1, 1});
  params.dataFormat = "NWHC";
  Shape result;
  EXPECT_TRUE(failed(inferConv2DShape({1, 8, 8, 3}, {3, 3, 3, 8}, std::nullopt,
                                      params, result, error("gopt.conv2d"))));
  EXPECT_NE(lastMessage().find("data_format \"NHWC\" or \"NCHW\", got "
                               "\"NWHC\""),
            std::string::npos)
      << lastMessage();
}

TEST_F(ShapeInferenceTest, SilentWithoutLocation) {
  Shape result;
  ShapeError silent(std::nullopt, "gopt.conv2d");
  EXPECT_TRUE(
      failed(inferConv2DShape({1, 8, 8}, {3, 3, 3, 8}, std::nullopt,
                              convParams("SAME", {1, 1}), result, silent)));
  EXPECT_TRUE(messages.empty());
}

TEST_F(ShapeInferenceTest, PoolCeilModeDropsWindowStartingInPadding) {
  WindowParams params;
  params.kernel = {3, 3};
  params.strides = {2, 2};
  params.dilations = {1, 1};
  params.padding = "EXPLICIT";
  params.pads = {1, 1, 1, 1};
  params.ceilMode = true;
  Shape result;
  // PyTorch: MaxPool2d(3, 2, padding=1, ceil_mode=True) on 6x6 gives 4x4
  // (3x3 without ceil_mode).
  ASSERT_TRUE(succeeded(inferPoolShape({1, 4, 6, 6}, params, "NCHW", result,
                                       error("gopt.max_pool"))));
  EXPECT_EQ(result, (Shape{1, 4, 4, 4}));
  params.ceilMode = false;
  ASSERT_TRUE(succeeded(inferPoolShape({1, 4, 6, 6}, params, "NCHW", result,
                                       error("gopt.max_pool"))));
  EXPECT_EQ(result, (Shape{1, 4, 3, 3}));
  // MaxPool2d(2, 2, padding=1, ceil_mode=True) on 5x5: a 4th window would
  // start in the trailing padding, so PyTorch gives 3x3.
  params.kernel = {2, 2};
  params.ceilMode = true;
  ASSERT_TRUE(succeeded(inferPoolShape({1, 4, 5, 5}, params, "NCHW", result,
                                       error("gopt.max_pool"))));
  EXPECT_EQ(result, (Shape{1, 4, 3, 3}));
}

TEST_F(ShapeInferenceTest, BroadcastRules) {
  Shape result;
  ASSERT_TRUE(succeeded(
      inferBroadcastShape({8, 1, 64}, {64}, result, error("gopt.add"))));
  EXPECT_EQ(result, (Shape{8, 1, 64}));
  ASSERT_TRUE(succeeded(
      inferBroadcastShape({kDyn, 1, 3}, {5, 1}, result, error("gopt.add"))));
  EXPECT_EQ(result, (Shape{kDyn, 5, 3}));
  EXPECT_TRUE(
      failed(inferBroadcastShape({2, 3}, {4, 3}, result, error("gopt.add"))));
  EXPECT_NE(lastMessage().find("cannot broadcast operand shapes [2, 3] and "
                               "[4, 3]"),
            std::string::npos);
}

TEST_F(ShapeInferenceTest, MatMulWithTransposeAndBatchBroadcast) {
  Shape result;
  ASSERT_TRUE(succeeded(inferMatMulShape({kDyn, 512}, {1000, 512}, false, true,
                                         result, error("gopt.matmul"))));
  EXPECT_EQ(result, (Shape{kDyn, 1000}));
  ASSERT_TRUE(succeeded(inferMatMulShape({4, 1, 3, 5}, {6, 5, 2}, false, false,
                                         result, error("gopt.matmul"))));
  EXPECT_EQ(result, (Shape{4, 6, 3, 2}));
  EXPECT_TRUE(failed(inferMatMulShape({3, 5}, {4, 2}, false, false, result,
                                      error("gopt.matmul"))));
}

TEST_F(ShapeInferenceTest, ReshapeInfersMinusOne) {
  Shape result;
  ASSERT_TRUE(succeeded(inferReshapeShape({2, 512, 1, 1}, {-1, 512}, result,
                                          error("gopt.reshape"))));
  EXPECT_EQ(result, (Shape{2, 512}));
  ASSERT_TRUE(succeeded(inferReshapeShape({kDyn, 512, 1, 1}, {-1, 512}, result,
                                          error("gopt.reshape"))));
  EXPECT_EQ(result, (Shape{kDyn, 512}));
  EXPECT_TRUE(
      failed(inferReshapeShape({2, 3}, {4, 2}, result, error("gopt.reshape"))));
  EXPECT_TRUE(failed(
      inferReshapeShape({2, 3}, {-1, -1}, result, error("gopt.reshape"))));
}

TEST_F(ShapeInferenceTest, ReduceKeepDimsAndNegativeAxes) {
  Shape result;
  ASSERT_TRUE(succeeded(inferReduceShape({kDyn, 7, 7, 64}, {1, -2}, true,
                                         result, error("gopt.reduce_mean"))));
  EXPECT_EQ(result, (Shape{kDyn, 1, 1, 64}));
  ASSERT_TRUE(succeeded(
      inferReduceShape({2, 3}, {}, false, result, error("gopt.reduce_sum"))));
  EXPECT_EQ(result, Shape{});
  EXPECT_TRUE(failed(inferReduceShape({2, 3}, {1, -1}, false, result,
                                      error("gopt.reduce_sum"))));
}

TEST_F(ShapeInferenceTest, FlattenTransposeConcatSlicePad) {
  Shape result;
  ASSERT_TRUE(succeeded(
      inferFlattenShape({kDyn, 64, 7, 7}, 1, result, error("gopt.flatten"))));
  EXPECT_EQ(result, (Shape{kDyn, 3136}));
  ASSERT_TRUE(succeeded(inferTransposeShape({kDyn, 224, 224, 3}, {0, 3, 1, 2},
                                            result, error("gopt.transpose"))));
  EXPECT_EQ(result, (Shape{kDyn, 3, 224, 224}));
  EXPECT_TRUE(failed(
      inferTransposeShape({1, 2}, {0, 0}, result, error("gopt.transpose"))));
  SmallVector<ArrayRef<int64_t>> inputs;
  Shape a = {kDyn, 64, 8, 8}, b = {2, 32, 8, 8};
  inputs = {a, b};
  ASSERT_TRUE(
      succeeded(inferConcatShape(inputs, 1, result, error("gopt.concat"))));
  EXPECT_EQ(result, (Shape{2, 96, 8, 8}));
  ASSERT_TRUE(succeeded(inferSliceShape({10, 4}, {1, 0}, {100, 4}, {3, 2},
                                        result, error("gopt.slice"))));
  EXPECT_EQ(result, (Shape{3, 2}));
  ASSERT_TRUE(succeeded(inferPadShape({1, 8, 8, 3}, {0, 0, 1, 2, 1, 2, 0, 0},
                                      "constant", result, error("gopt.pad"))));
  EXPECT_EQ(result, (Shape{1, 11, 11, 3}));
  EXPECT_TRUE(failed(inferPadShape({1, 2}, {0, 0, 2, 2}, "reflect", result,
                                   error("gopt.pad"))));
}

// The runtime resolves slice and pad shapes with these same functions
// (runtime/src/OpSchema.cpp), so the checks it relied on live here.
TEST_F(ShapeInferenceTest, SliceAndPadEdgeCases) {
  Shape result;
  // A start past the dimension gives an empty slice, not an error.
  ASSERT_TRUE(succeeded(
      inferSliceShape({4}, {6}, {9}, {1}, result, error("gopt.slice"))));
  EXPECT_EQ(result, (Shape{0}));
  EXPECT_TRUE(failed(
      inferSliceShape({10}, {-3}, {10}, {1}, result, error("gopt.slice"))));
  EXPECT_NE(lastMessage().find("expects non-negative starts"),
            std::string::npos)
      << lastMessage();
  EXPECT_TRUE(failed(
      inferSliceShape({10}, {0}, {10}, {0}, result, error("gopt.slice"))));
  // An unpadded dimension may be empty whatever the mode.
  ASSERT_TRUE(succeeded(inferPadShape({0, 3}, {0, 0, 1, 1}, "reflect", result,
                                      error("gopt.pad"))));
  EXPECT_EQ(result, (Shape{0, 5}));
  EXPECT_TRUE(failed(
      inferPadShape({0, 3}, {1, 0, 0, 0}, "edge", result, error("gopt.pad"))));
  EXPECT_NE(lastMessage().find("non-empty dimension 0 for edge padding"),
            std::string::npos)
      << lastMessage();
  int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(failed(
      inferPadShape({2}, {huge, 0}, "constant", result, error("gopt.pad"))));
  EXPECT_NE(lastMessage().find("overflows int64"), std::string::npos)
      << lastMessage();
}

// bias_add, batch_norm and global_avg_pool: one function each, called by
// the dialect's inferTypes and the runtime's shape functions.
TEST(SharedShapeFunctions, ChannelOpsAndGlobalPool) {
  namespace shape = gopt::shape;
  shape::Dims result;
  shape::Dims x = {2, 3, 4, 5}, five = {5}, three = {3};
  ASSERT_TRUE(shape::inferBiasAddShape(x, five, "NHWC", result).ok());
  EXPECT_EQ(result, x);
  ASSERT_TRUE(shape::inferBiasAddShape(x, three, "NCHW", result).ok());
  shape::Result bad = shape::inferBiasAddShape(x, three, "NHWC", result);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "expects bias to have 5 elements (one per channel), got 3");
  shape::Dims vector = {7};
  EXPECT_FALSE(shape::inferBiasAddShape(vector, vector, "NHWC", result).ok());

  const shape::DimsRef stats[4] = {five, five, five, five};
  int64_t channels = 0;
  ASSERT_TRUE(
      shape::inferBatchNormShape(x, stats, "NHWC", 1e-3f, 0.9f, channels).ok());
  EXPECT_EQ(channels, 5);
  bad = shape::inferBatchNormShape(x, stats, "NHWC", 1e-3f, 1.5f, channels);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "expects momentum in [0, 1], got 1.5");
  const shape::DimsRef wrongMean[4] = {five, five, three, five};
  bad = shape::inferBatchNormShape(x, wrongMean, "NHWC", 1e-3f, 0.9f, channels);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "expects mean to have 5 elements (one per channel), got 3");

  ASSERT_TRUE(shape::inferGlobalPoolShape(x, "NCHW", result).ok());
  EXPECT_EQ(result, (shape::Dims{2, 3, 1, 1}));
  ASSERT_TRUE(shape::inferGlobalPoolShape(x, "NHWC", result).ok());
  EXPECT_EQ(result, (shape::Dims{2, 1, 1, 5}));
  EXPECT_FALSE(shape::inferGlobalPoolShape(five, "NHWC", result).ok());
}

TEST_F(ShapeInferenceTest, DequantizePerChannelAndPerTensor) {
  Shape result;
  ASSERT_TRUE(succeeded(inferDequantizeShape({64, 3, 7, 7}, {64}, 0, result,
                                             error("gopt.dequantize"))));
  EXPECT_EQ(result, (Shape{64, 3, 7, 7}));
  ASSERT_TRUE(succeeded(inferDequantizeShape({512, 1000}, {1}, -1, result,
                                             error("gopt.dequantize"))));
  EXPECT_EQ(result, (Shape{512, 1000}));
  ASSERT_TRUE(succeeded(inferDequantizeShape({kDyn, 8}, {5}, 0, result,
                                             error("gopt.dequantize"))));
  EXPECT_TRUE(failed(
      inferDequantizeShape({64, 3}, {3}, 0, result, error("gopt.dequantize"))));
  EXPECT_NE(lastMessage().find("expects 64 scales (dimension 0 of values "
                               "[64, 3]) or 1 (per-tensor), got 3"),
            std::string::npos)
      << lastMessage();
  EXPECT_TRUE(failed(inferDequantizeShape({64, 3}, {64}, 2, result,
                                          error("gopt.dequantize"))));
  EXPECT_TRUE(failed(inferDequantizeShape({64, 3}, {64, 1}, 0, result,
                                          error("gopt.dequantize"))));
  EXPECT_TRUE(failed(
      inferDequantizeShape({}, {1}, 0, result, error("gopt.dequantize"))));
}

} // namespace
