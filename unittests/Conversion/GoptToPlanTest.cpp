//===- GoptToPlanTest.cpp - Lowering gopt IR to runtime plans -------------===//
//
// Lowers small graphs written in MLIR text and runs the plans on the
// runtime's reference backend, so the test checks what the lowering promises:
// the plan computes what the IR says.
//
//===----------------------------------------------------------------------===//

#include "gopt/Conversion/GoptToPlan.h"
#include "gopt/InitGopt.h"

#include "gopt/runtime/Session.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;
namespace rt = gopt::runtime;

namespace {

class GoptToPlanTest : public ::testing::Test {
protected:
  GoptToPlanTest() {
    DialectRegistry registry;
    gopt::registerGoptDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  FailureOr<gopt::plan::Plan> lower(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    FailureOr<func::FuncOp> func = gopt::findGraphFunction(*module);
    if (failed(func))
      return failure();
    return gopt::lowerToPlan(*func);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
};

TEST_F(GoptToPlanTest, MatMulBiasReluComputesExpectedValues) {
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @main(%x: tensor<?x2xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "y"}) {
      %w = gopt.constant dense<[[1.0, -1.0, 0.5], [2.0, 0.0, -3.0]]> : tensor<2x3xf32>
      %b = gopt.constant dense<[0.5, 0.25, -1.0]> : tensor<3xf32>
      %0 = gopt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
      %1 = gopt.add %0, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %2 = gopt.relu %1 : (tensor<?x3xf32>) -> tensor<?x3xf32>
      return %2 : tensor<?x3xf32>
    })mlir");
  ASSERT_TRUE(succeeded(proto)) << diagnostics;
  ASSERT_EQ(proto->ops_size(), 3);
  EXPECT_EQ(proto->ops(0).kind(), "matmul");
  // ODS defaults are explicit in the plan.
  ASSERT_TRUE(proto->ops(0).attrs().count("transpose_a"));
  EXPECT_FALSE(proto->ops(0).attrs().at("transpose_a").b());
  ASSERT_EQ(proto->inputs_size(), 1);
  EXPECT_EQ(proto->inputs(0).name(), "x");
  ASSERT_EQ(proto->outputs_size(), 1);
  EXPECT_EQ(proto->outputs(0).name(), "y");

  rt::StatusOr<rt::Plan> plan = rt::Plan::fromProto(*proto);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  rt::SessionOptions options;
  options.backend = "reference";
  options.batchSize = 2;
  auto session = rt::Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  rt::Tensor x = rt::Tensor::allocate(rt::DType::kF32, {2, 2});
  float values[] = {1.0f, 2.0f, -1.0f, 0.5f};
  std::copy(values, values + 4, x.data<float>());
  ASSERT_TRUE((*session)->setInput("x", x).ok());
  ASSERT_TRUE((*session)->run().ok());
  rt::StatusOr<rt::Tensor> y = (*session)->output("y");
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ(y->shape(), (rt::Shape{2, 3}));
  // Row 0: [1,2]·W = [5, -1, -5.5] + b = [5.5, -0.75, -6.5] -> relu.
  // Row 1: [-1,0.5]·W = [0, 1, -2] + b = [0.5, 1.25, -3] -> relu.
  float expected[] = {5.5f, 0.0f, 0.0f, 0.5f, 1.25f, 0.0f};
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(y->data<float>()[i], expected[i]) << "element " << i;
}

TEST_F(GoptToPlanTest, ConvBatchNormGraphRunsWithDynamicBatch) {
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @main(%x: tensor<?x3x8x8xf32>) -> (tensor<?x4x4x4xf32>, tensor<?x4x4x4xf32>) {
      %w = gopt.constant dense<0.1> : tensor<4x3x3x3xf32>
      %c = gopt.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %0 = gopt.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
      %1 = gopt.batch_norm %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, data_format = "NCHW"} : (tensor<?x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
      return %1, %1 : tensor<?x4x4x4xf32>, tensor<?x4x4x4xf32>
    })mlir");
  ASSERT_TRUE(succeeded(proto)) << diagnostics;
  // A value returned twice gets a copy for its second binding.
  ASSERT_EQ(proto->outputs_size(), 2);
  EXPECT_EQ(proto->outputs(0).name(), "output0");
  EXPECT_EQ(proto->outputs(1).name(), "output1");
  // The batch stays dynamic in the plan.
  EXPECT_EQ(proto->tensors(proto->inputs(0).tensor()).shape(0), -1);

  rt::StatusOr<rt::Plan> plan = rt::Plan::fromProto(*proto);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  rt::SessionOptions options;
  options.backend = "reference";
  options.batchSize = 3;
  auto session = rt::Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  rt::Tensor x = rt::Tensor::allocate(rt::DType::kF32, {3, 3, 8, 8});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = 1.0f;
  ASSERT_TRUE((*session)->setInput((*session)->inputs()[0].name, x).ok());
  ASSERT_TRUE((*session)->run().ok());
  rt::StatusOr<rt::Tensor> y = (*session)->output("output1");
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ(y->shape(), (rt::Shape{3, 4, 4, 4}));
  // Interior output pixel of channel 1: conv = 27 * 0.1 = 2.7; BN with
  // scale = offset = mean = var = 2: (2.7 - 2) / sqrt(2) * 2 + 2.
  float expected = (2.7f - 2.0f) / std::sqrt(2.0f + 1e-5f) * 2.0f + 2.0f;
  EXPECT_NEAR(y->data<float>()[16 + 4 + 1], expected, 1e-5);
}

// getPlanTensorNames() is what --gopt-quantize matches calibration files
// with: it must give every value the name the plan gives its tensor.
TEST_F(GoptToPlanTest, PlanTensorNamesMatchTheLoweredPlan) {
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @main(%x: tensor<?x2xf32> {gopt.name = "x"}, %y: tensor<?x2xf32>)
        -> (tensor<?x3xf32> {gopt.name = "out"}, tensor<?x2xf32>, tensor<?x2xf32>) {
      %w = gopt.constant dense<1.0> : tensor<2x3xf32>
      %0 = gopt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32> loc("fc")
      %1 = gopt.add %x, %y : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
      %2 = gopt.relu %1 : (tensor<?x2xf32>) -> tensor<?x2xf32> loc(fused["relu1", "elsewhere"])
      %3 = gopt.relu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
      return %3, %2, %2 : tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x2xf32>
    }
  )mlir");
  ASSERT_TRUE(succeeded(proto)) << diagnostics;
  auto func = cast<func::FuncOp>(module->getBody()->front());
  llvm::DenseMap<Value, std::string> names = gopt::getPlanTensorNames(func);
  std::set<std::string> planNames;
  for (const auto &tensor : proto->tensors())
    planNames.insert(tensor.name());
  std::vector<std::string> expected = {"x",     "input1", "constant_0", "fc",
                                       "add_2", "relu1",  "out"};
  std::vector<std::string> actual;
  for (BlockArgument arg : func.getArguments())
    actual.push_back(names.lookup(arg));
  for (Operation &op : func.getBody().front().without_terminator())
    actual.push_back(names.lookup(op.getResult(0)));
  EXPECT_EQ(actual, expected);
  for (const std::string &name : actual)
    EXPECT_TRUE(planNames.count(name)) << "'" << name << "' is not in the plan";
}

TEST_F(GoptToPlanTest, ForeignOpIsAClearError) {
  // gopt's tools load only the gopt and func dialects; any other op reaches
  // the lowering only from an embedder's context, as this unregistered one.
  context.allowUnregisteredDialects();
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %c = "foreign.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
      %0 = gopt.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir");
  EXPECT_TRUE(failed(proto));
  EXPECT_NE(diagnostics.find("'foreign.constant' op cannot be lowered to a "
                             "plan: only gopt ops run in the runtime"),
            std::string::npos)
      << diagnostics;
}

TEST_F(GoptToPlanTest, SeveralFunctionsWithoutMainIsAClearError) {
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> { return %x : tensor<2xf32> }
    func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> { return %x : tensor<2xf32> }
    )mlir");
  EXPECT_TRUE(failed(proto));
  EXPECT_NE(diagnostics.find("expects one graph function (or one named @main) "
                             "to lower, found 2"),
            std::string::npos)
      << diagnostics;
}

/// A training step as the training passes write it: state arguments with
/// initial values (or zeros) and results that update them. The session keeps
/// the state and writes the updates back after each run.
TEST_F(GoptToPlanTest, StateArgumentsAndUpdatesPersistAcrossRuns) {
  FailureOr<gopt::plan::Plan> proto = lower(R"mlir(
    func.func @main(%g: tensor<2xf32> {gopt.name = "g"},
                    %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param", gopt.initial_value = dense<[1.0, 2.0]> : tensor<2xf32>},
                    %v: tensor<2xf32> {gopt.name = "p/velocity", gopt.state = "optimizer"})
        -> (tensor<2xf32> {gopt.name = "p/new", gopt.updates = "p"},
            tensor<2xf32> {gopt.name = "p/velocity/new", gopt.updates = "p/velocity"},
            tensor<2xf32> {gopt.name = "out"}) {
      %p1, %v1 = gopt.sgd_update %p, %g, %v {lr = 0.5 : f32, momentum = 1.0 : f32}
          : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      return %p1, %v1, %p1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir");
  ASSERT_TRUE(succeeded(proto)) << diagnostics;
  // Zero-initialized state stores no bytes in the plan.
  EXPECT_EQ(proto->states_size(), 2);
  EXPECT_EQ(proto->inputs_size(), 1);
  EXPECT_EQ(proto->outputs_size(), 1);
  rt::StatusOr<rt::Plan> plan = rt::Plan::fromProto(*proto, "test");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  rt::SessionOptions options;
  options.backend = "reference";
  auto session = rt::Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  rt::Tensor g = rt::Tensor::allocate(rt::DType::kF32, {2});
  g.data<float>()[0] = 1.0f;
  g.data<float>()[1] = -2.0f;
  ASSERT_TRUE((*session)->setInput("g", g).ok());
  // v1 = v + g, p1 = p - 0.5 * v1, twice: v = g, 2g; p = p0 - 0.5g - g.
  for (int step = 0; step < 2; ++step)
    ASSERT_TRUE((*session)->run().ok());
  auto p = (*session)->state("p");
  ASSERT_TRUE(p.ok());
  EXPECT_FLOAT_EQ(p->data<float>()[0], 1.0f - 1.5f);
  EXPECT_FLOAT_EQ(p->data<float>()[1], 2.0f + 3.0f);
  auto v = (*session)->state("p/velocity");
  ASSERT_TRUE(v.ok());
  EXPECT_FLOAT_EQ(v->data<float>()[1], -4.0f);
}

TEST_F(GoptToPlanTest, BadStateArgumentsAreClearErrors) {
  struct Case {
    const char *source;
    const char *error;
  } cases[] = {
      {R"mlir(func.func @main(%p: tensor<?xf32> {gopt.name = "p", gopt.state = "param"}) -> tensor<?xf32> {
           return %p : tensor<?xf32> })mlir",
       "state argument 0 must have a static shape, got 'tensor<?xf32>'"},
      {R"mlir(func.func @main(%p: tensor<2xf32> {gopt.name = "p", gopt.state = "param", gopt.initial_value = dense<1> : tensor<2xi32>}) -> tensor<2xf32> {
           return %p : tensor<2xf32> })mlir",
       "has a value of type 'tensor<2xi32>' for a tensor of type "
       "'tensor<2xf32>'"},
      {R"mlir(func.func @main(%p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<2xf32> {gopt.updates = "q"}) {
           %0 = gopt.relu %p : (tensor<2xf32>) -> tensor<2xf32>
           return %0 : tensor<2xf32> })mlir",
       "result 0 updates 'q', which is not a state argument"},
      {R"mlir(func.func @main(%p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}, %x: tensor<3xf32>) -> (tensor<3xf32> {gopt.updates = "p"}) {
           %0 = gopt.relu %x : (tensor<3xf32>) -> tensor<3xf32>
           return %0 : tensor<3xf32> })mlir",
       "result 0 of type 'tensor<3xf32>' updates 'p' of type 'tensor<2xf32>'"},
  };
  for (const Case &c : cases) {
    diagnostics.clear();
    FailureOr<gopt::plan::Plan> proto = lower(c.source);
    EXPECT_TRUE(failed(proto)) << c.source;
    EXPECT_NE(diagnostics.find(c.error), std::string::npos)
        << "expected: " << c.error << "\ngot: " << diagnostics;
  }
}

} // namespace
