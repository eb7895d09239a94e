//===- DynamicShapeTest.cpp - Shapes computed in the graph at run time ----===//
//
// A plan whose reshape target is computed from the input's shape (Shape ->
// Slice -> Cast -> Concat -> dynamic_reshape, as PP-OCRv4's recognizer
// writes it) resolves at every input size in one session: the session
// computes the target on the host, re-plans memory, and runs. Values fed as
// inputs re-resolve when they change, and dynamic ops run as static ops.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

/// x[?, 6, ?] -> [x.dim0, channels, x.dim2, -1]. With channels 3 the -1 is 2;
/// with 4 the target holds the wrong element count.
PlanBuilder computedReshape(int64_t channels) {
  PlanBuilder b("dynamic-reshape");
  int x = b.addInput("x", DType::kF32, {-1, 6, -1});
  int shape = b.addIntermediate("shape", DType::kI64, {3});
  int batch = b.addIntermediate("batch", DType::kI64, {1});
  int width = b.addIntermediate("width", DType::kI64, {1});
  int width32 = b.addIntermediate("width32", DType::kI32, {1});
  int width64 = b.addIntermediate("width64", DType::kI64, {1});
  int middle = b.addConstant("middle",
                             makeTensor<int64_t>(DType::kI64, {1}, {channels}));
  int rest = b.addConstant("rest", makeTensor<int64_t>(DType::kI64, {1}, {-1}));
  int target = b.addIntermediate("target", DType::kI64, {4});
  int y = b.addOutput("y", DType::kF32, {-1, channels, -1, -1});
  b.addOp("shape", "shape", {x}, {shape});
  b.addOp("slice", "batch", {shape}, {batch},
          {{"starts", intsAttr({0})},
           {"ends", intsAttr({1})},
           {"steps", intsAttr({1})}});
  b.addOp("slice", "width", {shape}, {width},
          {{"starts", intsAttr({2})},
           {"ends", intsAttr({3})},
           {"steps", intsAttr({1})}});
  b.addOp("cast", "narrow", {width}, {width32});
  b.addOp("cast", "widen", {width32}, {width64});
  b.addOp("concat", "target", {batch, middle, width64, rest}, {target},
          {{"axis", intAttr(0)}});
  b.addOp("dynamic_reshape", "reshape", {x, target}, {y});
  return b;
}

Tensor iota(const Shape &shape) {
  Tensor t = Tensor::allocate(DType::kF32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(DynamicShape, ReshapeResolvesAtTwoInputSizesInOneSession) {
  auto plan = computedReshape(3).build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  for (Shape in : {Shape{1, 6, 5}, Shape{2, 6, 7}, Shape{1, 6, 5}}) {
    Tensor x = iota(in);
    ASSERT_TRUE((*session)->setInput("x", x).ok());
    Status ran = (*session)->run();
    ASSERT_TRUE(ran.ok()) << ran.toString();
    auto y = (*session)->output("y");
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->shape(), (Shape{in[0], 3, in[2], 2}));
    EXPECT_EQ(values<float>(*y), values<float>(x));
  }
}

TEST(DynamicShape, WrongElementCountNamesTheOp) {
  auto plan = computedReshape(4).build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  ASSERT_TRUE((*session)->setInput("x", iota({1, 6, 5})).ok());
  Status ran = (*session)->run();
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.message().find("op 'reshape' (dynamic_reshape)"),
            std::string::npos)
      << ran.message();
  EXPECT_NE(ran.message().find("cannot reshape [1, 6, 5] (30 elements) to "
                               "[1, 4, 5, -1]"),
            std::string::npos)
      << ran.message();
}

TEST(DynamicShape, TargetFromAnInputValueResolvesWhenTheValueChanges) {
  PlanBuilder b("input-target");
  int x = b.addInput("x", DType::kF32, {-1});
  int target = b.addInput("target", DType::kI64, {2});
  int y = b.addOutput("y", DType::kF32, {-1, -1});
  b.addOp("dynamic_reshape", "reshape", {x, target}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  Tensor xs = iota({12});
  ASSERT_TRUE((*session)->setInput("x", xs).ok());
  // Same shapes, new values: each run re-resolves the result shape.
  for (Shape want : {Shape{3, 4}, Shape{2, 6}, Shape{3, 4}}) {
    ASSERT_TRUE(
        (*session)
            ->setInput("target", makeTensor<int64_t>(DType::kI64, {2},
                                                     {want[0], want[1]}))
            .ok());
    Status ran = (*session)->run();
    ASSERT_TRUE(ran.ok()) << ran.toString();
    auto out = (*session)->output("y");
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->shape(), want);
    EXPECT_EQ(values<float>(*out), values<float>(xs));
  }
}

/// x[?, ?] sliced by ONNX bounds fed as inputs: dynamic_slice runs as slice.
TEST(DynamicShape, DynamicSliceRunsAsSliceWithInputBounds) {
  PlanBuilder b("input-slice");
  int x = b.addInput("x", DType::kF32, {-1, -1});
  int starts = b.addInput("starts", DType::kI64, {1});
  int ends = b.addInput("ends", DType::kI64, {1});
  int axes = b.addConstant("axes", makeTensor<int64_t>(DType::kI64, {1}, {1}));
  int steps =
      b.addConstant("steps", makeTensor<int64_t>(DType::kI64, {1}, {1}));
  int y = b.addOutput("y", DType::kF32, {-1, -1});
  b.addOp("dynamic_slice", "slice", {x, starts, ends, axes, steps}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  ASSERT_TRUE((*session)->setInput("x", iota({2, 5})).ok());
  auto setBounds = [&](int64_t start, int64_t end) {
    ASSERT_TRUE(
        (*session)
            ->setInput("starts", makeTensor<int64_t>(DType::kI64, {1}, {start}))
            .ok());
    ASSERT_TRUE(
        (*session)
            ->setInput("ends", makeTensor<int64_t>(DType::kI64, {1}, {end}))
            .ok());
  };
  // ONNX's negative end counts from the end of the dimension.
  setBounds(1, -1);
  ASSERT_TRUE((*session)->run().ok());
  auto out = (*session)->output("y");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(*out), (std::vector<float>{1, 2, 3, 6, 7, 8}));
  setBounds(3, 100);
  ASSERT_TRUE((*session)->run().ok());
  out = (*session)->output("y");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<float>(*out), (std::vector<float>{3, 4, 8, 9}));
}

TEST(DynamicShape, ValueFromAStateIsRejected) {
  PlanBuilder b("state-target");
  int x = b.addInput("x", DType::kF32, {-1});
  int target = b.addState("target", DType::kI64, {2});
  int y = b.addOutput("y", DType::kF32, {-1, -1});
  b.addOp("dynamic_reshape", "reshape", {x, target}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("op 'reshape' (dynamic_reshape)"),
            std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("state 'target'"),
            std::string::npos);
}

} // namespace
