//===- DataDependentShapeTest.cpp - Results whose shapes data decides -----===//
//
// A plan with non_zero of a computed tensor, followed by ops that consume
// its count, runs in one session for inputs with different counts: the
// session cuts the plan at the op (PlanPieces.h), runs it on the host and
// resolves the ops after it for the count it reported. Bad operands give
// errors naming the op.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

/// y = -x[nonzero(relu(x))] and the coordinates, for x of shape [?].
PlanBuilder pickPositives() {
  PlanBuilder b("pick-positives");
  int x = b.addInput("x", DType::kF32, {-1});
  int positive = b.addIntermediate("positive", DType::kF32, {-1});
  int nonZero = b.addIntermediate("non_zero", DType::kI64, {1, -1});
  int coords = b.addOutput("coords", DType::kI64, {-1, 1});
  int picked = b.addIntermediate("picked", DType::kF32, {-1});
  int y = b.addOutput("y", DType::kF32, {-1});
  b.addOp("relu", "relu", {x}, {positive});
  b.addOp("non_zero", "nz", {positive}, {nonZero});
  b.addOp("transpose", "coords", {nonZero}, {coords},
          {{"perm", intsAttr({1, 0})}});
  b.addOp("gather_nd", "pick", {x, coords}, {picked});
  b.addOp("neg", "neg", {picked}, {y});
  return b;
}

TEST(DataDependentShape, CountsChangeFromRunToRunInOneSession) {
  auto plan = pickPositives().build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  for (const char *backend : {"reference", "cpu"}) {
    SessionOptions options;
    options.backend = backend;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    const std::vector<std::vector<float>> inputs = {
        {1, -2, 3, 0}, {-1, -1, -1, -1}, {5, 6, 7, 8, -9}, {1, -2, 3, 0}};
    for (const std::vector<float> &in : inputs) {
      Tensor x =
          makeTensor<float>(DType::kF32, {static_cast<int64_t>(in.size())}, in);
      ASSERT_TRUE((*session)->setInput("x", x).ok());
      Status ran = (*session)->run();
      ASSERT_TRUE(ran.ok()) << backend << ": " << ran.toString();
      std::vector<float> expected;
      std::vector<int64_t> expectedCoords;
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] > 0) {
          expected.push_back(-in[i]);
          expectedCoords.push_back(static_cast<int64_t>(i));
        }
      auto y = (*session)->output("y");
      auto coords = (*session)->output("coords");
      ASSERT_TRUE(y.ok() && coords.ok());
      EXPECT_EQ(y->shape(), (Shape{static_cast<int64_t>(expected.size())}));
      EXPECT_EQ(values<float>(*y), expected) << backend;
      EXPECT_EQ(coords->shape(),
                (Shape{static_cast<int64_t>(expected.size()), 1}));
      EXPECT_EQ(values<int64_t>(*coords), expectedCoords) << backend;
    }
    // One profile row per op, the host op's included, counting the runs.
    const std::vector<OpProfile> &profiles = (*session)->opProfiles();
    ASSERT_EQ(profiles.size(), 5u) << backend;
    EXPECT_EQ(profiles[1].kind, "non_zero");
    EXPECT_EQ(profiles[1].calls, static_cast<int64_t>(inputs.size()));
    (*session)->resetProfiles();
    EXPECT_EQ((*session)->opProfiles()[1].calls, 0);
  }
}

TEST(DataDependentShape, RepeatedCountsKeepTheMemoryPlan) {
  auto plan = pickPositives().build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  Tensor x = makeTensor<float>(DType::kF32, {4}, {1, -2, 3, 0});
  ASSERT_TRUE((*session)->setInput("x", x).ok());
  ASSERT_TRUE((*session)->run().ok());
  auto first = (*session)->output("y");
  ASSERT_TRUE(first.ok());
  const void *data = first->data();
  MemoryStats before = (*session)->memoryStats();
  // Other data, the same count: nothing is re-planned or moved.
  Tensor x2 = makeTensor<float>(DType::kF32, {4}, {-1, 4, 0, 2});
  ASSERT_TRUE((*session)->setInput("x", x2).ok());
  ASSERT_TRUE((*session)->run().ok());
  auto second = (*session)->output("y");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->data(), data);
  EXPECT_EQ(values<float>(*second), (std::vector<float>{-4, -2}));
  EXPECT_EQ((*session)->memoryStats().totalBytes(), before.totalBytes());
}

// A shape computed in the graph from the count (Shape -> Slice -> Concat ->
// dynamic_reshape) resolves in the piece after the cut, on the host.
TEST(DataDependentShape, ShapesComputedFromTheCountResolveAfterTheCut) {
  PlanBuilder b("reshape-count");
  int x = b.addInput("x", DType::kI32, {-1});
  int nonZero = b.addIntermediate("non_zero", DType::kI64, {1, -1});
  int shape = b.addIntermediate("shape", DType::kI64, {2});
  int count = b.addIntermediate("count", DType::kI64, {1});
  int one = b.addConstant("one", makeTensor<int64_t>(DType::kI64, {1}, {1}));
  int target = b.addIntermediate("target", DType::kI64, {2});
  int column = b.addOutput("column", DType::kI64, {-1, 1});
  b.addOp("non_zero", "nz", {x}, {nonZero});
  b.addOp("shape", "shape", {nonZero}, {shape});
  b.addOp("slice", "count", {shape}, {count},
          {{"starts", intsAttr({1})},
           {"ends", intsAttr({2})},
           {"steps", intsAttr({1})}});
  b.addOp("concat", "target", {count, one}, {target}, {{"axis", intAttr(0)}});
  b.addOp("dynamic_reshape", "reshape", {nonZero, target}, {column});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  for (const std::vector<int32_t> &in :
       {std::vector<int32_t>{0, 5, 0, 7, 1}, std::vector<int32_t>{0, 0, 3}}) {
    Tensor xIn =
        makeTensor<int32_t>(DType::kI32, {static_cast<int64_t>(in.size())}, in);
    ASSERT_TRUE((*session)->setInput("x", xIn).ok());
    Status ran = (*session)->run();
    ASSERT_TRUE(ran.ok()) << ran.toString();
    std::vector<int64_t> expected;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i])
        expected.push_back(static_cast<int64_t>(i));
    auto out = (*session)->output("column");
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->shape(), (Shape{static_cast<int64_t>(expected.size()), 1}));
    EXPECT_EQ(values<int64_t>(*out), expected);
  }
}

TEST(DataDependentShape, NmsBoxCountMismatchNamesTheOp) {
  PlanBuilder b("nms");
  int boxes = b.addInput("boxes", DType::kF32, {1, 3, 4});
  int scores = b.addInput("scores", DType::kF32, {1, 1, -1});
  int limit =
      b.addConstant("limit", makeTensor<int64_t>(DType::kI64, {1}, {2}));
  int iou = b.addConstant("iou", makeTensor<float>(DType::kF32, {1}, {0.5f}));
  int threshold =
      b.addConstant("threshold", makeTensor<float>(DType::kF32, {1}, {0.0f}));
  int kept = b.addOutput("kept", DType::kI64, {-1, 3});
  b.addOp("non_max_suppression", "nms", {boxes, scores, limit, iou, threshold},
          {kept});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  auto session = Session::create(*plan);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  ASSERT_TRUE((*session)
                  ->setInput("boxes", Tensor::allocate(DType::kF32, {1, 3, 4}))
                  .ok());
  ASSERT_TRUE((*session)
                  ->setInput("scores", Tensor::allocate(DType::kF32, {1, 1, 2}))
                  .ok());
  Status ran = (*session)->run();
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.message().find("op 'nms' (non_max_suppression)"),
            std::string::npos)
      << ran.toString();
  EXPECT_NE(ran.message().find("box count"), std::string::npos)
      << ran.toString();
}

} // namespace
