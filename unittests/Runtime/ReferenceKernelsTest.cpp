//===- ReferenceKernelsTest.cpp - Reference kernels vs. hand values -------===//
#include "TestUtil.h"

#include "gopt/runtime/OpSchema.h"

#include <cmath>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;

Tensor image3x3() { return makeF32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(Conv2dRef, ValidPadding) {
  Tensor w = makeF32({2, 2, 1, 1}, {1, 1, 1, 1});
  Tensor y = runOk("conv2d", {{"padding", stringAttr("VALID")}},
                   {image3x3(), w}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(y), {12, 16, 24, 28});
}

TEST(Conv2dRef, SamePaddingPadsAfter) {
  Tensor w = makeF32({2, 2, 1, 1}, {1, 1, 1, 1});
  Tensor y = runOk("conv2d", {{"padding", stringAttr("SAME")}}, {image3x3(), w},
                   {F32, {1, 3, 3, 1}});
  // total padding 1 per dim goes after (bottom/right).
  expectNear(values<float>(y), {12, 16, 9, 24, 28, 15, 15, 17, 9});
}

TEST(Conv2dRef, ExplicitPadsAndStride) {
  Tensor w = makeF32({3, 3, 1, 1}, std::vector<float>(9, 1.0f));
  Tensor y =
      runOk("conv2d",
            {{"pads", intsAttr({1, 1, 1, 1})}, {"strides", intsAttr({2, 2})}},
            {image3x3(), w}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(y), {12, 16, 24, 28});
}

TEST(Conv2dRef, AsymmetricExplicitPads) {
  Tensor w = makeF32({1, 1, 1, 1}, {2});
  Tensor y = runOk("conv2d", {{"pads", intsAttr({1, 0, 0, 1})}},
                   {makeF32({1, 1, 2, 1}, {3, 4}), w}, {F32, {1, 2, 3, 1}});
  expectNear(values<float>(y), {0, 0, 0, 6, 8, 0});
}

TEST(Conv2dRef, Dilation) {
  Tensor w = makeF32({2, 2, 1, 1}, {1, 1, 1, 1});
  Tensor y =
      runOk("conv2d",
            {{"dilations", intsAttr({2, 2})}, {"padding", stringAttr("VALID")}},
            {image3x3(), w}, {F32, {1, 1, 1, 1}});
  expectNear(values<float>(y), {1 + 3 + 7 + 9});
}

TEST(Conv2dRef, GroupsBiasReluNCHW) {
  // Two groups of one channel each: y = relu(x * w + b) per channel.
  Tensor x = makeF32({1, 2, 1, 1}, {3, 5});
  Tensor w = makeF32({2, 1, 1, 1}, {2, -10});
  Tensor b = makeF32({2}, {1, 1});
  Tensor y = runOk("conv2d",
                   {{"groups", intAttr(2)},
                    {"data_format", stringAttr("NCHW")},
                    {"filter_format", stringAttr("OIHW")},
                    {"activation", stringAttr("relu")}},
                   {x, w, b}, {F32, {1, 2, 1, 1}});
  expectNear(values<float>(y), {7, 0});
}

TEST(Conv2dRef, GroupedOutputChannelsUseTheirGroupInputs) {
  // Cin=2, Cout=4, groups=2: outputs 0,1 read channel 0; 2,3 read channel 1.
  Tensor x = makeF32({1, 1, 1, 2}, {3, 5});
  Tensor w = makeF32({1, 1, 1, 4}, {1, 2, 3, 4}); // HWIO, I = Cin/groups = 1
  Tensor y =
      runOk("conv2d", {{"groups", intAttr(2)}}, {x, w}, {F32, {1, 1, 1, 4}});
  expectNear(values<float>(y), {3, 6, 15, 20});
}

TEST(Conv2dRef, NCHWMatchesNHWC) {
  Tensor xNhwc = randomF32({2, 5, 6, 4}, 1);
  Tensor wHwio = randomF32({3, 3, 2, 6}, 2); // groups 2
  AttrMap common = {{"groups", intAttr(2)},
                    {"strides", intsAttr({2, 1})},
                    {"padding", stringAttr("SAME")},
                    {"activation", stringAttr("relu6")}};
  Tensor yNhwc = runOk("conv2d", common, {xNhwc, wHwio}, {F32, {2, 3, 6, 6}});
  Tensor xNchw = runOk("transpose", {{"perm", intsAttr({0, 3, 1, 2})}}, {xNhwc},
                       {F32, {2, 4, 5, 6}});
  Tensor wOihw = runOk("transpose", {{"perm", intsAttr({3, 2, 0, 1})}}, {wHwio},
                       {F32, {6, 2, 3, 3}});
  AttrMap nchw = common;
  nchw["data_format"] = stringAttr("NCHW");
  nchw["filter_format"] = stringAttr("OIHW");
  Tensor yNchw = runOk("conv2d", nchw, {xNchw, wOihw}, {F32, {2, 6, 3, 6}});
  Tensor back = runOk("transpose", {{"perm", intsAttr({0, 2, 3, 1})}}, {yNchw},
                      {F32, {2, 3, 6, 6}});
  EXPECT_LT(maxAbsDiff(back, yNhwc), 1e-5f);
}

TEST(Conv2dRef, RejectsChannelMismatch) {
  auto r = runOp("conv2d", {},
                 {randomF32({1, 3, 3, 2}, 1), randomF32({1, 1, 3, 4}, 2)},
                 {{F32, {1, 3, 3, 4}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("conv2d_op"), std::string::npos);
}

TEST(BatchNormRef, Inference) {
  Tensor x = makeF32({2, 2}, {1, 2, 3, 4});
  Tensor y = runOk("batch_norm", {{"epsilon", floatAttr(0.0)}},
                   {x, makeF32({2}, {2, 1}), makeF32({2}, {0, 10}),
                    makeF32({2}, {1, 2}), makeF32({2}, {4, 1})},
                   {F32, {2, 2}});
  // channel 0: (x-1)/2*2; channel 1: (x-2)/1*1+10
  expectNear(values<float>(y), {0, 10, 2, 12});
}

TEST(BatchNormRef, InferenceNCHW) {
  Tensor x = makeF32({1, 2, 1, 2}, {1, 3, 10, 20});
  Tensor y =
      runOk("batch_norm",
            {{"epsilon", floatAttr(0.0)}, {"data_format", stringAttr("NCHW")}},
            {x, makeF32({2}, {1, 1}), makeF32({2}, {0, 0}),
             makeF32({2}, {1, 10}), makeF32({2}, {1, 100})},
            {F32, {1, 2, 1, 2}});
  expectNear(values<float>(y), {0, 2, 0, 1});
}

TEST(BatchNormRef, Training) {
  Tensor x = makeF32({4, 1}, {1, 2, 3, 4});
  auto r =
      runOp("batch_norm",
            {{"epsilon", floatAttr(0.0)},
             {"training", boolAttr(true)},
             {"momentum", floatAttr(0.9)}},
            {x, makeF32({1}, {1}), makeF32({1}, {0}), makeF32({1}, {0}),
             makeF32({1}, {1})},
            {{F32, {4, 1}}, {F32, {1}}, {F32, {1}}, {F32, {1}}, {F32, {1}}});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  float s = std::sqrt(1.25f);
  expectNear(values<float>((*r)[0]),
             {-1.5f / s, -0.5f / s, 0.5f / s, 1.5f / s});
  expectNear(values<float>((*r)[1]), {2.5f});
  expectNear(values<float>((*r)[2]), {1.25f});
  expectNear(values<float>((*r)[3]), {0.25f});
  expectNear(values<float>((*r)[4]), {0.9f + 0.1f * 5.0f / 3.0f});
}

TEST(BatchNormRef, TrainingNeedsFiveResults) {
  auto r = runOp("batch_norm", {{"training", boolAttr(true)}},
                 {makeF32({1, 1}, {1}), makeF32({1}, {1}), makeF32({1}, {0}),
                  makeF32({1}, {0}), makeF32({1}, {1})},
                 {{F32, {1, 1}}});
  EXPECT_FALSE(r.ok());
}

TEST(PoolRef, MaxPool) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i)
    v[i] = i;
  Tensor y = runOk(
      "max_pool", {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}},
      {makeF32({1, 4, 4, 1}, v)}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(y), {5, 7, 13, 15});
}

TEST(PoolRef, MaxPoolIgnoresPadding) {
  Tensor y =
      runOk("max_pool",
            {{"kernel", intsAttr({2, 2})}, {"pads", intsAttr({1, 0, 1, 0})}},
            {makeF32({1, 2, 2, 1}, {-1, -2, -3, -4})}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(y), {-1, -1, -1, -1});
}

TEST(PoolRef, AvgPoolCountIncludePad) {
  Tensor x = makeF32({1, 2, 2, 1}, {1, 2, 3, 4});
  AttrMap attrs = {{"kernel", intsAttr({3, 3})},
                   {"pads", intsAttr({1, 1, 1, 1})}};
  Tensor exclude = runOk("avg_pool", attrs, {x}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(exclude), {2.5, 2.5, 2.5, 2.5});
  attrs["count_include_pad"] = boolAttr(true);
  Tensor include = runOk("avg_pool", attrs, {x}, {F32, {1, 2, 2, 1}});
  expectNear(values<float>(include), {10 / 9.f, 10 / 9.f, 10 / 9.f, 10 / 9.f});
}

TEST(PoolRef, CeilMode) {
  Tensor x = makeF32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  AttrMap attrs = {{"kernel", intsAttr({2, 2})},
                   {"strides", intsAttr({2, 2})},
                   {"data_format", stringAttr("NCHW")}};
  Tensor floorMax = runOk("max_pool", attrs, {x}, {F32, {1, 1, 1, 1}});
  expectNear(values<float>(floorMax), {5});
  attrs["ceil_mode"] = boolAttr(true);
  Tensor ceilMax = runOk("max_pool", attrs, {x}, {F32, {1, 1, 2, 2}});
  expectNear(values<float>(ceilMax), {5, 6, 8, 9});
  Tensor ceilAvg = runOk("avg_pool", attrs, {x}, {F32, {1, 1, 2, 2}});
  expectNear(values<float>(ceilAvg), {3, 4.5, 7.5, 9});
  // The extra ceil_mode area is outside the padded input: never counted.
  attrs["count_include_pad"] = boolAttr(true);
  Tensor ceilAvgInclude = runOk("avg_pool", attrs, {x}, {F32, {1, 1, 2, 2}});
  expectNear(values<float>(ceilAvgInclude), {3, 4.5, 7.5, 9});
}

TEST(PoolRef, SamePadding) {
  Tensor x = makeF32({1, 1, 3, 1}, {1, 2, 3});
  Tensor y = runOk("avg_pool",
                   {{"kernel", intsAttr({1, 2})},
                    {"strides", intsAttr({1, 2})},
                    {"padding", stringAttr("SAME")}},
                   {x}, {F32, {1, 1, 2, 1}});
  expectNear(values<float>(y), {1.5, 3});
}

TEST(PoolRef, GlobalAvgPool) {
  Tensor x = makeF32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  Tensor y = runOk("global_avg_pool", {}, {x}, {F32, {1, 1, 1, 2}});
  expectNear(values<float>(y), {2.5, 25});
  Tensor z = runOk("global_avg_pool", {{"data_format", stringAttr("NCHW")}},
                   {x}, {F32, {1, 2, 1, 1}});
  expectNear(values<float>(z), {8.25, 19.25});
}

TEST(BinaryRef, BroadcastAdd) {
  Tensor y =
      runOk("add", {}, {makeF32({2, 1}, {1, 2}), makeF32({3}, {10, 20, 30})},
            {F32, {2, 3}});
  expectNear(values<float>(y), {11, 21, 31, 12, 22, 32});
}

TEST(BinaryRef, BroadcastBothSides) {
  Tensor y =
      runOk("sub", {}, {makeF32({1, 3}, {1, 2, 3}), makeF32({2, 1}, {1, 2})},
            {F32, {2, 3}});
  expectNear(values<float>(y), {0, 1, 2, -1, 0, 1});
}

TEST(BinaryRef, AllFloatOps) {
  Tensor a = makeF32({3}, {1, -4, 9}), b = makeF32({3}, {2, 2, 0.5});
  expectNear(values<float>(runOk("mul", {}, {a, b}, {F32, {3}})), {2, -8, 4.5});
  expectNear(values<float>(runOk("div", {}, {a, b}, {F32, {3}})),
             {0.5, -2, 18});
  expectNear(values<float>(runOk("max", {}, {a, b}, {F32, {3}})), {2, 2, 9});
  expectNear(values<float>(runOk("min", {}, {a, b}, {F32, {3}})), {1, -4, 0.5});
  expectNear(values<float>(runOk("pow", {}, {a, b}, {F32, {3}})), {1, 16, 3});
  expectNear(values<float>(runOk("squared_difference", {}, {a, b}, {F32, {3}})),
             {1, 36, 72.25});
}

TEST(BinaryRef, IntegerDivTruncatesTowardZero) {
  Tensor a = makeTensor<int32_t>(DType::kI32, {3}, {-7, 7, 5});
  Tensor b = makeTensor<int32_t>(DType::kI32, {3}, {2, -2, 5});
  Tensor y = runOk("div", {}, {a, b}, {DType::kI32, {3}});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{-3, -3, 1}));
}

TEST(BinaryRef, IntegerDivByZeroIsAnError) {
  Tensor a = makeTensor<int64_t>(DType::kI64, {1}, {1});
  Tensor b = makeTensor<int64_t>(DType::kI64, {1}, {0});
  auto r = runOp("div", {}, {a, b}, {{DType::kI64, {1}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("div_op"), std::string::npos);
}

TEST(BinaryRef, IntegerAndBoolTypes) {
  Tensor a = makeTensor<int64_t>(DType::kI64, {2}, {5, -3});
  Tensor b = makeTensor<int64_t>(DType::kI64, {1}, {4});
  EXPECT_EQ(values<int64_t>(runOk("add", {}, {a, b}, {DType::kI64, {2}})),
            (std::vector<int64_t>{9, 1}));
  Tensor i8a = makeTensor<int8_t>(DType::kI8, {2}, {100, -100});
  Tensor i8b = makeTensor<int8_t>(DType::kI8, {2}, {-1, 3});
  EXPECT_EQ(values<int8_t>(runOk("max", {}, {i8a, i8b}, {DType::kI8, {2}})),
            (std::vector<int8_t>{100, 3}));
  Tensor ba = makeTensor<bool>(DType::kBool, {4}, {false, false, true, true});
  Tensor bb = makeTensor<bool>(DType::kBool, {4}, {false, true, false, true});
  EXPECT_EQ(values<bool>(runOk("mul", {}, {ba, bb}, {DType::kBool, {4}})),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(values<bool>(runOk("max", {}, {ba, bb}, {DType::kBool, {4}})),
            (std::vector<bool>{false, true, true, true}));
}

TEST(BinaryRef, MismatchedTypesAreRejected) {
  auto r =
      runOp("add", {},
            {makeF32({1}, {1}), makeTensor<int32_t>(DType::kI32, {1}, {1})},
            {{F32, {1}}});
  EXPECT_FALSE(r.ok());
}

TEST(BinaryRef, HalfPrecisionViaF32) {
  Tensor a = Tensor::allocate(DType::kF16, {2});
  Tensor b = Tensor::allocate(DType::kF16, {2});
  a.data<uint16_t>()[0] = floatToHalf(1.5f);
  a.data<uint16_t>()[1] = floatToHalf(-2.0f);
  b.data<uint16_t>()[0] = floatToHalf(0.25f);
  b.data<uint16_t>()[1] = floatToHalf(3.0f);
  Tensor y = runOk("add", {}, {a, b}, {DType::kF16, {2}});
  EXPECT_EQ(halfToFloat(y.data<uint16_t>()[0]), 1.75f);
  EXPECT_EQ(halfToFloat(y.data<uint16_t>()[1]), 1.0f);
  Tensor c = Tensor::allocate(DType::kBF16, {1});
  c.data<uint16_t>()[0] = floatToBf16(-4.0f);
  Tensor r = runOk("relu", {}, {c}, {DType::kBF16, {1}});
  EXPECT_EQ(bf16ToFloat(r.data<uint16_t>()[0]), 0.0f);
}

TEST(UnaryRef, Activations) {
  Tensor x = makeF32({4}, {-2, -0.5, 0.5, 8});
  expectNear(values<float>(runOk("relu", {}, {x}, {F32, {4}})), {0, 0, 0.5, 8});
  expectNear(values<float>(runOk("relu6", {}, {x}, {F32, {4}})),
             {0, 0, 0.5, 6});
  expectNear(values<float>(runOk("leaky_relu", {{"alpha", floatAttr(0.1)}}, {x},
                                 {F32, {4}})),
             {-0.2f, -0.05f, 0.5f, 8});
  expectNear(values<float>(
                 runOk("clip", {{"min", floatAttr(-1)}, {"max", floatAttr(1)}},
                       {x}, {F32, {4}})),
             {-1, -0.5, 0.5, 1});
  expectNear(values<float>(runOk("neg", {}, {x}, {F32, {4}})),
             {2, 0.5, -0.5, -8});
  expectNear(values<float>(runOk("abs", {}, {x}, {F32, {4}})),
             {2, 0.5, 0.5, 8});
  expectNear(values<float>(runOk("sigmoid", {}, {x}, {F32, {4}})),
             {0.1192029f, 0.3775407f, 0.6224593f, 0.9996646f});
  expectNear(values<float>(runOk("tanh", {}, {x}, {F32, {4}})),
             {-0.9640276f, -0.4621172f, 0.4621172f, 0.9999998f});
  expectNear(values<float>(runOk("erf", {}, {x}, {F32, {4}})),
             {-0.9953223f, -0.5204999f, 0.5204999f, 1.0f});
  expectNear(values<float>(runOk("gelu", {}, {x}, {F32, {4}})),
             {-0.0455003f, -0.1542688f, 0.3457312f, 8.0f});
  expectNear(values<float>(runOk("gelu", {{"approximate", stringAttr("tanh")}},
                                 {x}, {F32, {4}})),
             {-0.0454023f, -0.1542860f, 0.3457140f, 8.0f});
}

TEST(UnaryRef, Math) {
  Tensor x = makeF32({2}, {1, 4});
  expectNear(values<float>(runOk("exp", {}, {x}, {F32, {2}})),
             {2.7182818f, 54.59815f}, 1e-4f);
  expectNear(values<float>(runOk("log", {}, {x}, {F32, {2}})), {0, 1.3862944f});
  expectNear(values<float>(runOk("sqrt", {}, {x}, {F32, {2}})), {1, 2});
  expectNear(values<float>(runOk("rsqrt", {}, {x}, {F32, {2}})), {1, 0.5});
}

TEST(UnaryRef, IntegerNegAbsRelu) {
  Tensor x = makeTensor<int32_t>(DType::kI32, {3}, {-3, 0, 4});
  EXPECT_EQ(values<int32_t>(runOk("neg", {}, {x}, {DType::kI32, {3}})),
            (std::vector<int32_t>{3, 0, -4}));
  EXPECT_EQ(values<int32_t>(runOk("abs", {}, {x}, {DType::kI32, {3}})),
            (std::vector<int32_t>{3, 0, 4}));
  EXPECT_EQ(values<int32_t>(runOk("relu", {}, {x}, {DType::kI32, {3}})),
            (std::vector<int32_t>{0, 0, 4}));
  EXPECT_FALSE(runOp("exp", {}, {x}, {{DType::kI32, {3}}}).ok());
}

TEST(SoftmaxRef, LastAxisAndStability) {
  Tensor x = makeF32({2, 3}, {1, 2, 3, 1000, 1000, 1000});
  Tensor y = runOk("softmax", {}, {x}, {F32, {2, 3}});
  expectNear(values<float>(y),
             {0.0900306f, 0.2447285f, 0.6652409f, 1 / 3.f, 1 / 3.f, 1 / 3.f});
  Tensor l = runOk("log_softmax", {}, {x}, {F32, {2, 3}});
  expectNear(values<float>(l), {-2.4076059f, -1.4076059f, -0.4076059f,
                                -1.0986123f, -1.0986123f, -1.0986123f});
}

TEST(SoftmaxRef, Axis0) {
  Tensor x = makeF32({2, 2}, {0, 1, 0, 1});
  Tensor y = runOk("softmax", {{"axis", intAttr(0)}}, {x}, {F32, {2, 2}});
  expectNear(values<float>(y), {0.5, 0.5, 0.5, 0.5});
}

TEST(ReduceRef, SumMeanMax) {
  Tensor x = makeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  expectNear(values<float>(runOk("reduce_sum", {{"axes", intsAttr({1})}}, {x},
                                 {F32, {2}})),
             {6, 15});
  expectNear(values<float>(runOk(
                 "reduce_sum",
                 {{"axes", intsAttr({-1})}, {"keep_dims", boolAttr(true)}}, {x},
                 {F32, {2, 1}})),
             {6, 15});
  // An empty axes list reduces over every axis.
  expectNear(values<float>(runOk("reduce_mean", {{"axes", intsAttr({})}}, {x},
                                 {F32, {}})),
             {3.5});
  expectNear(values<float>(runOk("reduce_max", {{"axes", intsAttr({0})}}, {x},
                                 {F32, {3}})),
             {4, 5, 6});
  Tensor i = makeTensor<int32_t>(DType::kI32, {3}, {1, 2, 4});
  EXPECT_EQ(values<int32_t>(runOk("reduce_sum", {{"axes", intsAttr({})}}, {i},
                                  {DType::kI32, {}})),
            (std::vector<int32_t>{7}));
}

TEST(ReduceRef, MiddleAxis) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i)
    v[i] = i;
  Tensor y = runOk("reduce_sum", {{"axes", intsAttr({1})}},
                   {makeF32({2, 3, 4}, v)}, {F32, {2, 4}});
  expectNear(values<float>(y), {12, 15, 18, 21, 48, 51, 54, 57});
}

TEST(ShapeOpsRef, ReshapeFlattenShape) {
  Tensor x = makeF32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor r =
      runOk("reshape", {{"shape", intsAttr({3, -1})}}, {x}, {F32, {3, 4}});
  EXPECT_EQ(values<float>(r), values<float>(x));
  Tensor f = runOk("flatten", {{"axis", intAttr(2)}}, {x}, {F32, {6, 2}});
  EXPECT_EQ(values<float>(f), values<float>(x));
  Tensor s = runOk("shape", {}, {x}, {DType::kI64, {3}});
  EXPECT_EQ(values<int64_t>(s), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_FALSE(
      runOp("reshape", {{"shape", intsAttr({5, -1})}}, {x}, {{F32, {5, 2}}})
          .ok());
}

TEST(ShapeOpsRef, Transpose) {
  Tensor x = makeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y =
      runOk("transpose", {{"perm", intsAttr({1, 0})}}, {x}, {F32, {3, 2}});
  expectNear(values<float>(y), {1, 4, 2, 5, 3, 6});
  Tensor i = makeTensor<int64_t>(DType::kI64, {1, 2, 2}, {1, 2, 3, 4});
  Tensor z = runOk("transpose", {{"perm", intsAttr({2, 0, 1})}}, {i},
                   {DType::kI64, {2, 1, 2}});
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{1, 3, 2, 4}));
}

TEST(ShapeOpsRef, Concat) {
  Tensor a = makeF32({2, 1}, {1, 2}), b = makeF32({2, 2}, {3, 4, 5, 6});
  Tensor y = runOk("concat", {{"axis", intAttr(1)}}, {a, b}, {F32, {2, 3}});
  expectNear(values<float>(y), {1, 3, 4, 2, 5, 6});
  Tensor z = runOk("concat", {{"axis", intAttr(-2)}}, {b, b}, {F32, {4, 2}});
  expectNear(values<float>(z), {3, 4, 5, 6, 3, 4, 5, 6});
  EXPECT_FALSE(
      runOp("concat", {{"axis", intAttr(0)}}, {a, b}, {{F32, {4, 1}}}).ok());
}

TEST(ShapeOpsRef, Slice) {
  std::vector<float> v(10);
  for (int i = 0; i < 10; ++i)
    v[i] = i;
  Tensor x = makeF32({10}, v);
  Tensor y = runOk("slice",
                   {{"starts", intsAttr({1})},
                    {"ends", intsAttr({100})},
                    {"steps", intsAttr({3})}},
                   {x}, {F32, {3}});
  expectNear(values<float>(y), {1, 4, 7});
  Tensor z = runOk("slice",
                   {{"starts", intsAttr({7})},
                    {"ends", intsAttr({10})},
                    {"steps", intsAttr({1})}},
                   {x}, {F32, {3}});
  expectNear(values<float>(z), {7, 8, 9});
  // As in the dialect, negative starts are the importers' to normalise.
  auto negative = runOp("slice",
                        {{"starts", intsAttr({-3})},
                         {"ends", intsAttr({10})},
                         {"steps", intsAttr({1})}},
                        {x}, {{F32, {3}}});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("expects non-negative starts"),
            std::string::npos)
      << negative.status().message();
  Tensor m = makeF32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = runOk("slice",
                   {{"starts", intsAttr({1, 0})},
                    {"ends", intsAttr({3, 2})},
                    {"steps", intsAttr({1, 1})}},
                   {m}, {F32, {2, 2}});
  expectNear(values<float>(w), {4, 5, 7, 8});
  // Backward (ONNX's rule): the start clamps to the last element, end -1
  // runs down to element 0.
  Tensor back = runOk("slice",
                      {{"starts", intsAttr({100})},
                       {"ends", intsAttr({-1})},
                       {"steps", intsAttr({-3})}},
                      {x}, {F32, {4}});
  expectNear(values<float>(back), {9, 6, 3, 0});
  Tensor mixed = runOk("slice",
                       {{"starts", intsAttr({2, 0})},
                        {"ends", intsAttr({0, 3})},
                        {"steps", intsAttr({-1, 2})}},
                       {m}, {F32, {2, 2}});
  expectNear(values<float>(mixed), {7, 9, 4, 6});
  auto past = runOp("slice",
                    {{"starts", intsAttr({2})},
                     {"ends", intsAttr({5})},
                     {"steps", intsAttr({-1})}},
                    {x}, {{F32, {0}}});
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("expects -1 <= ends <= starts"),
            std::string::npos)
      << past.status().message();
}

TEST(ShapeOpsRef, PadModes) {
  Tensor x = makeF32({3}, {1, 2, 3});
  expectNear(
      values<float>(runOk(
          "pad", {{"pads", intsAttr({2, 2})}, {"mode", stringAttr("reflect")}},
          {x}, {F32, {7}})),
      {3, 2, 1, 2, 3, 2, 1});
  expectNear(
      values<float>(runOk(
          "pad", {{"pads", intsAttr({2, 2})}, {"mode", stringAttr("edge")}},
          {x}, {F32, {7}})),
      {1, 1, 1, 2, 3, 3, 3});
  expectNear(values<float>(runOk(
                 "pad", {{"pads", intsAttr({1, 0})}, {"value", floatAttr(9)}},
                 {x}, {F32, {4}})),
             {9, 1, 2, 3});
  Tensor m = makeTensor<int32_t>(DType::kI32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values<int32_t>(runOk("pad", {{"pads", intsAttr({0, 1, 1, 0})}},
                                  {m}, {DType::kI32, {3, 3}})),
            (std::vector<int32_t>{0, 1, 2, 0, 3, 4, 0, 0, 0}));
  EXPECT_FALSE(
      runOp("pad",
            {{"pads", intsAttr({3, 0})}, {"mode", stringAttr("reflect")}}, {x},
            {{F32, {6}}})
          .ok());
}

TEST(CastRef, FloatToIntTruncatesAndToBool) {
  Tensor x = makeF32({4}, {-1.7f, 2.9f, 0.0f, 0.25f});
  EXPECT_EQ(values<int32_t>(runOk("cast", {}, {x}, {DType::kI32, {4}})),
            (std::vector<int32_t>{-1, 2, 0, 0}));
  EXPECT_EQ(values<bool>(runOk("cast", {}, {x}, {DType::kBool, {4}})),
            (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(values<int8_t>(runOk("cast", {}, {x}, {DType::kI8, {4}})),
            (std::vector<int8_t>{-1, 2, 0, 0}));
}

TEST(CastRef, AllPairsRoundTripSmallIntegers) {
  const std::vector<DType> &all = allDTypes();
  Tensor src = makeTensor<int64_t>(DType::kI64, {3}, {0, 1, 5});
  for (DType to : all) {
    Tensor mid = runOk("cast", {}, {src}, {to, {3}});
    Tensor back = runOk("cast", {}, {mid}, {DType::kI64, {3}});
    std::vector<int64_t> expected = {0, 1, to == DType::kBool ? 1 : 5};
    EXPECT_EQ(values<int64_t>(back), expected) << dtypeName(to);
    for (DType to2 : all) // every pair is accepted
      EXPECT_TRUE(runOp("cast", {}, {mid}, {{to2, {3}}}).ok())
          << dtypeName(to) << " -> " << dtypeName(to2);
  }
}

TEST(DequantizeRef, PerChannelPerTensorAndNegativeAxis) {
  // [2, 3] int8 values, scales per row (axis 0) or per column (axis -1).
  Tensor q = makeTensor<int8_t>(DType::kI8, {2, 3}, {127, -127, 0, 1, -2, 64});
  Tensor rows = makeF32({2}, {0.5f, 2.0f});
  expectNear(values<float>(runOk("dequantize", {{"axis", intAttr(0)}},
                                 {q, rows}, {F32, {2, 3}})),
             {63.5f, -63.5f, 0.0f, 2.0f, -4.0f, 128.0f});
  Tensor cols = makeF32({3}, {1.0f, 0.25f, -1.0f});
  expectNear(values<float>(runOk("dequantize", {{"axis", intAttr(-1)}},
                                 {q, cols}, {F32, {2, 3}})),
             {127.0f, -31.75f, 0.0f, 1.0f, -0.5f, -64.0f});
  Tensor one = makeF32({1}, {0.1f});
  expectNear(values<float>(runOk("dequantize", {{"axis", intAttr(1)}}, {q, one},
                                 {F32, {2, 3}})),
             {12.7f, -12.7f, 0.0f, 0.1f, -0.2f, 6.4f});
  // A middle axis of a rank-4 (OIHW-like) tensor, int8 extremes.
  Tensor q4 = makeTensor<int8_t>(DType::kI8, {1, 2, 1, 2}, {-128, 127, 3, -3});
  Tensor s4 = makeF32({2}, {1.0f, 10.0f});
  expectNear(values<float>(runOk("dequantize", {{"axis", intAttr(1)}}, {q4, s4},
                                 {F32, {1, 2, 1, 2}})),
             {-128.0f, 127.0f, 30.0f, -30.0f});
}

TEST(DequantizeRef, RunsOnTheCpuBackendWithConstantInputs) {
  Tensor q = makeTensor<int8_t>(DType::kI8, {2, 2}, {10, -20, 30, -40});
  Tensor s = makeF32({2}, {0.5f, 0.25f});
  expectNear(values<float>(runOk("dequantize", {{"axis", intAttr(0)}}, {q, s},
                                 {F32, {2, 2}}, "cpu", {0, 1})),
             {5.0f, -10.0f, 7.5f, -10.0f});
}

TEST(DequantizeRef, RejectsBadTypesScalesAndAxis) {
  Tensor q = makeTensor<int8_t>(DType::kI8, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto expectError = [](StatusOr<std::vector<Tensor>> result,
                        const std::string &needle) {
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(needle), std::string::npos)
        << result.status().message();
  };
  expectError(runOp("dequantize", {{"axis", intAttr(0)}},
                    {q, makeF32({3}, {1, 1, 1})}, {{F32, {2, 3}}}),
              "expects 2 scales (dimension 0 of values [2, 3]) or 1 "
              "(per-tensor), got 3");
  expectError(runOp("dequantize", {{"axis", intAttr(2)}},
                    {q, makeF32({1}, {1})}, {{F32, {2, 3}}}),
              "expects axis in [-2, 2) for a rank-2 operand, got 2");
  expectError(runOp("dequantize", {}, {makeF32({2}, {1, 2}), makeF32({1}, {1})},
                    {{F32, {2}}}),
              "dequantize values must be i8, got f32");
  expectError(
      runOp("dequantize", {}, {q, makeF32({1}, {1})}, {{DType::kI8, {2, 3}}}),
      "the op produces f32");
  expectError(
      runOp("dequantize", {}, {q, makeF32({2, 1}, {1, 1})}, {{F32, {2, 3}}}),
      "expects rank-1 scales (one per channel along axis 0, or one "
      "for the whole tensor), got rank 2");
}

TEST(QuantizeRef, RoundsHalfToEvenSaturatesAndInvertsDequantize) {
  // Per row (axis 0): scale 0.5 and 2. Ties go to even (1.25 / 0.5 = 2.5
  // -> 2, 3 / 2 = 1.5 -> 2), out-of-range values saturate, NaN is 0.
  Tensor x = makeF32({2, 4}, {1.25f, -0.75f, 100.0f, -100.0f, 3.0f, -5.0f,
                              std::nanf(""), 255.0f});
  Tensor rows = makeF32({2}, {0.5f, 2.0f});
  std::vector<int8_t> expected = {2, -2, 127, -128, 2, -2, 0, 127};
  EXPECT_EQ(values<int8_t>(runOk("quantize", {{"axis", intAttr(0)}}, {x, rows},
                                 {DType::kI8, {2, 4}})),
            expected);
  // dequantize(quantize(x)) is x within half a scale, for x in range.
  Tensor y = makeF32({1, 5}, {0.1f, -0.33f, 0.49f, -0.5f, 0.0f});
  Tensor s = makeF32({1}, {0.5f / 127});
  Tensor q = runOk("quantize", {}, {y, s}, {DType::kI8, {1, 5}});
  std::vector<float> back =
      values<float>(runOk("dequantize", {}, {q, s}, {F32, {1, 5}}));
  for (size_t i = 0; i < back.size(); ++i)
    EXPECT_NEAR(back[i], values<float>(y)[i], 0.5f * 0.5f / 127 + 1e-7f);
}

TEST(QuantizeRef, RejectsNonPositiveScalesAndBadTypes) {
  auto expectError = [](StatusOr<std::vector<Tensor>> result,
                        const std::string &needle) {
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(needle), std::string::npos)
        << result.status().message();
  };
  Tensor x = makeF32({2}, {1, 2});
  expectError(
      runOp("quantize", {}, {x, makeF32({1}, {0.0f})}, {{DType::kI8, {2}}}),
      "quantize scale 0 is 0, expected a finite positive number");
  expectError(
      runOp("quantize", {}, {x, makeF32({1}, {-1.0f})}, {{DType::kI8, {2}}}),
      "expected a finite positive number");
  expectError(
      runOp("quantize", {},
            {makeTensor<int8_t>(DType::kI8, {2}, {1, 2}), makeF32({1}, {1})},
            {{DType::kI8, {2}}}),
      "quantize values must be f32, got i8");
  expectError(runOp("quantize", {}, {x, makeF32({1}, {1})}, {{F32, {2}}}),
              "the op produces i8");
}

TEST(MatmulRef, TransposesAndBatchBroadcast) {
  Tensor a = makeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = makeF32({3, 2}, {1, 0, 0, 1, 1, 1});
  expectNear(values<float>(runOk("matmul", {}, {a, b}, {F32, {2, 2}})),
             {4, 5, 10, 11});
  Tensor at = makeF32({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor bt = makeF32({2, 3}, {1, 0, 1, 0, 1, 1});
  expectNear(values<float>(runOk("matmul",
                                 {{"transpose_a", boolAttr(true)},
                                  {"transpose_b", boolAttr(true)}},
                                 {at, bt}, {F32, {2, 2}})),
             {4, 5, 10, 11});
  // [2,1,2,3] x [3,3,2] -> [2,3,2,2]: batch dims broadcast.
  Tensor a4 = randomF32({2, 1, 2, 3}, 3), b3 = randomF32({3, 3, 2}, 4);
  Tensor y = runOk("matmul", {}, {a4, b3}, {F32, {2, 3, 2, 2}});
  const float *pa = a4.data<float>(), *pb = b3.data<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          float acc = 0;
          for (int k = 0; k < 3; ++k)
            acc += pa[i * 6 + r * 3 + k] * pb[j * 6 + k * 2 + c];
          EXPECT_NEAR(y.data<float>()[((i * 3 + j) * 2 + r) * 2 + c], acc,
                      1e-5);
        }
}

TEST(MiscRef, BiasAdd) {
  Tensor x = makeF32({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor b = makeF32({2}, {10, 20});
  expectNear(
      values<float>(runOk("bias_add", {{"data_format", stringAttr("NCHW")}},
                          {x, b}, {F32, {1, 2, 1, 2}})),
      {11, 12, 23, 24});
  expectNear(values<float>(runOk("bias_add", {}, {x, b}, {F32, {1, 2, 1, 2}})),
             {11, 22, 13, 24});
}

TEST(MiscRef, IdentityDropoutStopGradient) {
  Tensor x = makeF32({3}, {1, 2, 3});
  for (const char *kind : {"identity", "stop_gradient", "dropout"})
    expectNear(values<float>(runOk(kind, {}, {x}, {F32, {3}})), {1, 2, 3});
}

TEST(MiscRef, TrainingDropoutScalesKeptElements) {
  Tensor x = makeF32({10000}, std::vector<float>(10000, 1.0f));
  Tensor y = runOk("dropout",
                   {{"training", boolAttr(true)}, {"ratio", floatAttr(0.25)}},
                   {x}, {F32, {10000}});
  int zeros = 0;
  for (float v : values<float>(y)) {
    if (v == 0)
      ++zeros;
    else
      EXPECT_NEAR(v, 1 / 0.75f, 1e-6);
  }
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.03);
}

// dropout_grad recomputes its dropout's mask: with the same seed attribute
// (and run) it zeroes exactly the elements dropout zeroed; another seed
// draws another mask.
TEST(MiscRef, DropoutGradUsesTheForwardMask) {
  Tensor x = makeF32({4099}, std::vector<float>(4099, 1.0f));
  auto mask = [&](const char *kind, int64_t seed) {
    AttrMap attrs = {{"ratio", floatAttr(0.5)}, {"seed", intAttr(seed)}};
    if (std::string(kind) == "dropout")
      attrs["training"] = boolAttr(true);
    std::vector<float> v =
        values<float>(runOk(kind, attrs, {x}, {F32, {4099}}));
    std::vector<bool> kept;
    for (float f : v)
      kept.push_back(f != 0);
    return kept;
  };
  std::vector<bool> forward = mask("dropout", 7);
  EXPECT_EQ(mask("dropout_grad", 7), forward);
  EXPECT_NE(mask("dropout", 8), forward);
  int kept = 0;
  for (bool k : forward)
    kept += k;
  EXPECT_NEAR(kept / 4099.0, 0.5, 0.03);
}

// random_uniform_like: values in [low, high) with the right mean, the same
// values for the same seed attribute, other values for another.
TEST(MiscRef, RandomUniformLikeDrawsInRangeBySeed) {
  Tensor x = makeF32({5000}, std::vector<float>(5000, 0.0f));
  auto draw = [&](int64_t seed) {
    return values<float>(runOk("random_uniform_like",
                               {{"low", floatAttr(-2)},
                                {"high", floatAttr(3)},
                                {"seed", intAttr(seed)}},
                               {x}, {F32, {5000}}));
  };
  std::vector<float> a = draw(11);
  double sum = 0;
  for (float v : a) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / a.size(), 0.5, 0.1);
  EXPECT_EQ(draw(11), a);
  EXPECT_NE(draw(12), a);
}

// tf_idf_vectorizer, ONNX's tf_uniandbigrams_skip5 and its batch form:
// unigrams count once, bigrams at every skip up to max_skip_count.
TEST(MiscRef, TfIdfVectorizerCountsNGramsWithSkips) {
  std::vector<int64_t> data = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  AttrMap attrs = {{"mode", stringAttr("TF")},
                   {"min_gram_length", intAttr(1)},
                   {"max_gram_length", intAttr(2)},
                   {"max_skip_count", intAttr(5)},
                   {"ngram_counts", intsAttr({0, 4})},
                   {"ngram_indexes", intsAttr({0, 1, 2, 3, 4, 5, 6})},
                   {"pool_int64s", intsAttr({2, 3, 5, 4, 5, 6, 7, 8, 6, 7})}};
  Tensor flat = makeTensor<int64_t>(DType::kI64, {12}, data);
  expectNear(
      values<float>(runOk("tf_idf_vectorizer", attrs, {flat}, {F32, {7}})),
      {0, 3, 1, 0, 1, 3, 1});
  Tensor rows = makeTensor<int64_t>(DType::kI64, {2, 6}, data);
  expectNear(
      values<float>(runOk("tf_idf_vectorizer", attrs, {rows}, {F32, {2, 7}})),
      {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1});
  // TFIDF weighs each n-gram's count.
  attrs["mode"] = stringAttr("TFIDF");
  attrs["weights"] = floatsAttr({1, 2, 3, 4, 5, 6, 7});
  expectNear(
      values<float>(runOk("tf_idf_vectorizer", attrs, {flat}, {F32, {7}})),
      {0, 6, 3, 0, 5, 18, 7});
}

// resize_grad is resize's adjoint: <resize(x), dy> = <x, resize_grad(dy)>
// for nearest, linear and cubic.
TEST(MiscRef, ResizeGradIsTheAdjointOfResize) {
  Tensor x = randomF32({1, 2, 4, 5}, 3);
  Tensor dy = randomF32({1, 2, 7, 9}, 4);
  for (const char *mode : {"nearest", "linear", "cubic"}) {
    AttrMap attrs = {
        {"sizes", intsAttr({7, 9})},
        {"mode", stringAttr(mode)},
        {"coordinate_transformation_mode", stringAttr("half_pixel")},
        {"data_format", stringAttr("NCHW")}};
    std::vector<float> y =
        values<float>(runOk("resize", attrs, {x}, {F32, {1, 2, 7, 9}}));
    std::vector<float> dx = values<float>(
        runOk("resize_grad", attrs, {x, dy}, {F32, {1, 2, 4, 5}}));
    double forward = 0, backward = 0;
    for (size_t i = 0; i < y.size(); ++i)
      forward += double(y[i]) * dy.data<float>()[i];
    for (size_t i = 0; i < dx.size(); ++i)
      backward += double(dx[i]) * x.data<float>()[i];
    EXPECT_NEAR(forward, backward, 1e-4) << mode;
  }
}

TEST(MiscRef, CheckNumericsNamesOpAndMessage) {
  Tensor ok = makeF32({2}, {1, 2});
  EXPECT_TRUE(runOp("check_numerics", {{"message", stringAttr("m")}}, {ok},
                    {{F32, {2}}})
                  .ok());
  Tensor bad = makeF32({2}, {1, NAN});
  auto r = runOp("check_numerics", {{"message", stringAttr("after conv")}},
                 {bad}, {{F32, {2}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("check_numerics_op"), std::string::npos);
  EXPECT_NE(r.status().message().find("after conv"), std::string::npos);
  EXPECT_NE(r.status().message().find("NaN"), std::string::npos);
}

TEST(Fp16, Conversions) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(halfToFloat(floatToHalf(v)), v) << v;
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(1e6f))));
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.0f / 4096)), 1.0f); // ties even
  EXPECT_EQ(bf16ToFloat(floatToBf16(3.0f)), 3.0f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + 1.0f / 512)), 1.0f);
}

} // namespace

// The runtime's window shape function agrees with the dialect's (and
// PyTorch's): with ceil_mode, a last window that would start in the trailing
// padding is dropped.
TEST(PoolRef, CeilModeDropsWindowStartingInPadding) {
  // MaxPool2d(2, stride 2, padding 1, ceil_mode) on 5: 3, not 4.
  StatusOr<WindowDim> dropped =
      computeWindowDim(5, 2, 2, 1, "EXPLICIT", 1, 1, /*ceilMode=*/true);
  ASSERT_TRUE(dropped.ok()) << dropped.status().message();
  EXPECT_EQ(dropped->outSize, 3);
  // MaxPool2d(3, stride 2, padding 1, ceil_mode) on 6: 4 (the last window
  // starts at 6 = in + before - 1, inside the leading padding's reach).
  StatusOr<WindowDim> kept =
      computeWindowDim(6, 3, 2, 1, "EXPLICIT", 1, 1, /*ceilMode=*/true);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->outSize, 4);
}

namespace {

// f64 computes in double: 1 + 1e-12 and exp(1e-10) - 1 are lost in f32.
TEST(F64Ref, ElementwiseComputesInDouble) {
  const DType F64 = DType::kF64;
  Tensor a = makeTensor<double>(F64, {2}, {1.0, 0.5});
  Tensor b = makeTensor<double>(F64, {1}, {1e-12});
  Tensor sum = runOk("add", {}, {a, b}, {F64, {2}});
  EXPECT_EQ(values<double>(sum),
            (std::vector<double>{1.0 + 1e-12, 0.5 + 1e-12}));
  Tensor x = makeTensor<double>(F64, {2}, {1e-10, -2.0});
  Tensor e = runOk("exp", {}, {x}, {F64, {2}});
  EXPECT_DOUBLE_EQ(values<double>(e)[0], std::exp(1e-10));
  EXPECT_DOUBLE_EQ(values<double>(e)[1], std::exp(-2.0));
  Tensor s = runOk("reduce_sum", {{"axes", intsAttr({0})}}, {sum}, {F64, {}});
  EXPECT_DOUBLE_EQ(values<double>(s)[0], 1.5 + 2e-12);
}

TEST(F64Ref, FloatOnlyKernelsRunThroughF32) {
  // softmax has no f64 code: the wrapper computes it in f32.
  const DType F64 = DType::kF64;
  Tensor x = makeTensor<double>(F64, {2}, {0.0, std::log(3.0)});
  Tensor y = runOk("softmax", {{"axis", intAttr(-1)}}, {x}, {F64, {2}});
  EXPECT_NEAR(values<double>(y)[0], 0.25, 1e-6);
  EXPECT_NEAR(values<double>(y)[1], 0.75, 1e-6);
}

TEST(CastRef, UnsignedWrapsAndSaturates) {
  Tensor big =
      makeTensor<uint64_t>(DType::kU64, {1}, {18446744073709551615ull});
  Tensor asDouble = runOk("cast", {}, {big}, {DType::kF64, {1}});
  EXPECT_EQ(values<double>(asDouble)[0], 18446744073709551615.0);
  // Integer to integer wraps; float to integer saturates.
  Tensor wrapped = runOk("cast", {}, {big}, {DType::kU16, {1}});
  EXPECT_EQ(values<uint16_t>(wrapped)[0], 65535);
  Tensor negative = makeTensor<double>(DType::kF64, {1}, {-5});
  Tensor clamped = runOk("cast", {}, {negative}, {DType::kU32, {1}});
  EXPECT_EQ(values<uint32_t>(clamped)[0], 0u);
}

TEST(UnsignedRef, ArithmeticAndReductionsKeepTheFullRange) {
  const DType U64 = DType::kU64;
  uint64_t top = 18446744073709551615ull;
  Tensor a = makeTensor<uint64_t>(U64, {2}, {top, 10});
  Tensor b = makeTensor<uint64_t>(U64, {2}, {2, 3});
  EXPECT_EQ(values<uint64_t>(runOk("div", {}, {a, b}, {U64, {2}})),
            (std::vector<uint64_t>{top / 2, 3}));
  EXPECT_EQ(values<uint64_t>(runOk("max", {}, {a, b}, {U64, {2}})),
            (std::vector<uint64_t>{top, 10}));
  EXPECT_EQ(values<uint64_t>(
                runOk("mod", {{"fmod", intAttr(0)}}, {a, b}, {U64, {2}})),
            (std::vector<uint64_t>{top % 2, 1}));
  Tensor m = runOk("reduce_max", {{"axes", intsAttr({0})}}, {a}, {U64, {}});
  EXPECT_EQ(values<uint64_t>(m)[0], top);
  // Subtraction wraps as numpy's does.
  Tensor u8 = makeTensor<uint8_t>(DType::kU8, {1}, {1});
  Tensor two = makeTensor<uint8_t>(DType::kU8, {1}, {2});
  EXPECT_EQ(values<uint8_t>(runOk("sub", {}, {u8, two}, {DType::kU8, {1}}))[0],
            255);
}

TEST(BitShiftRef, LeftRightAndWideShifts) {
  const DType U8 = DType::kU8;
  Tensor x = makeTensor<uint8_t>(U8, {3}, {16, 4, 1});
  Tensor n = makeTensor<uint8_t>(U8, {3}, {1, 2, 8});
  EXPECT_EQ(
      values<uint8_t>(runOk("bit_shift", {{"direction", stringAttr("LEFT")}},
                            {x, n}, {U8, {3}})),
      (std::vector<uint8_t>{32, 16, 0}));
  EXPECT_EQ(
      values<uint8_t>(runOk("bit_shift", {{"direction", stringAttr("RIGHT")}},
                            {x, n}, {U8, {3}})),
      (std::vector<uint8_t>{8, 1, 0}));
  // Signed operands are refused by the op table's shape function.
  Tensor i = makeTensor<int32_t>(DType::kI32, {1}, {1});
  EXPECT_FALSE(runOp("bit_shift", {{"direction", stringAttr("LEFT")}}, {i, i},
                     {{DType::kI32, {1}}})
                   .ok());
}

} // namespace
