//===- TrainerTest.cpp - The training step as a library object ------------===//
#include "gopt/Tooling/Trainer.h"
#include "gopt/Tooling/ModelLoader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace gopt::tooling;
using gopt::runtime::DType;
using gopt::runtime::Tensor;

namespace {

// A linear classifier of 1x4x4 images into 3 classes.
constexpr const char *kClassifier = R"(
func.func @main(%x: tensor<?x1x4x4xf32> {gopt.name = "input"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<0.01> : tensor<3x16xf32> loc("fc.weight")
  %b = gopt.constant dense<0.0> : tensor<3xf32> loc("fc.bias")
  %0 = gopt.flatten %x : (tensor<?x1x4x4xf32>) -> tensor<?x16xf32>
  %1 = gopt.matmul %0, %w {transpose_b = true} : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  %2 = gopt.add %1, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
)";

class TrainerTest : public ::testing::Test {
protected:
  void SetUp() override {
#ifndef GOPT_TEST_HAVE_COMPILER
    GTEST_SKIP() << "this build has no compiler to turn a .mlir model into a "
                    "training plan";
#endif
    char dir[] = "/tmp/gopt-trainer-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    options_.model = dir_ + "/classifier.mlir";
    std::ofstream(options_.model) << kClassifier;
    options_.optimizer = "sgd";
    options_.lr = 0.5;
    options_.batch = 6;
  }
  void TearDown() override {
    if (!dir_.empty())
      std::system(("rm -rf " + dir_).c_str());
  }

  // Class c lights pixel c (and c + 8) of each 4x4 image.
  static void makeBatch(int64_t n, Tensor &inputs, Tensor &labels) {
    inputs = Tensor::allocate(DType::kF32, {n, 1, 4, 4});
    labels = Tensor::allocate(DType::kI64, {n});
    std::fill_n(inputs.data<float>(), n * 16, 0.f);
    for (int64_t i = 0; i < n; ++i) {
      int64_t c = i % 3;
      inputs.data<float>()[i * 16 + c] = 1;
      inputs.data<float>()[i * 16 + c + 8] = 1;
      labels.data<int64_t>()[i] = c;
    }
  }

  std::string dir_;
  TrainOptions options_;
};

TEST_F(TrainerTest, StepsLowerTheLossAndEvaluationUsesTheTrainedParameters) {
  auto trainer = Trainer::create(options_);
  ASSERT_TRUE(trainer.ok()) << trainer.status().message();
  Trainer &t = **trainer;
  EXPECT_EQ(t.numClasses(), 3);
  EXPECT_EQ(t.exampleShape(), (gopt::runtime::Shape{1, 4, 4}));
  EXPECT_EQ(t.parameterNames(),
            (std::vector<std::string>{"fc.weight", "fc.bias"}));
  Tensor x, y;
  makeBatch(6, x, y);
  auto first = t.step(x, y);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_NEAR(*first, std::log(3.0), 1e-3); // uniform logits at the start
  float last = *first;
  for (int i = 0; i < 30; ++i) {
    auto loss = t.step(x, y);
    ASSERT_TRUE(loss.ok()) << loss.status().message();
    last = *loss;
  }
  EXPECT_LT(last, 0.1f);

  // Evaluation at another batch size, with i32 labels.
  Tensor ex, ey;
  makeBatch(9, ex, ey);
  Tensor ey32 = Tensor::allocate(DType::kI32, {9});
  for (int i = 0; i < 9; ++i)
    ey32.data<int32_t>()[i] = static_cast<int32_t>(ey.data<int64_t>()[i]);
  EvalResult r;
  ASSERT_TRUE(t.evaluateBatch(ex, ey32, r).ok());
  EXPECT_EQ(r.total, 9);
  EXPECT_EQ(r.correct, 9);
  EXPECT_LT(r.meanLoss(), 0.1);
}

TEST_F(TrainerTest, ParametersSaveLoadAndSet) {
  auto trained = Trainer::create(options_);
  ASSERT_TRUE(trained.ok()) << trained.status().message();
  Tensor x, y;
  makeBatch(6, x, y);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE((*trained)->step(x, y).ok());
  ASSERT_TRUE((*trained)->saveParameters(dir_ + "/params").ok());

  auto fresh = Trainer::create(options_);
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE((*fresh)->loadParameters(dir_ + "/params").ok());
  for (const std::string &name : (*trained)->parameterNames()) {
    Tensor a = *(*trained)->parameter(name), b = *(*fresh)->parameter(name);
    ASSERT_EQ(a.numElements(), b.numElements());
    for (int64_t i = 0; i < a.numElements(); ++i)
      EXPECT_EQ(a.data<float>()[i], b.data<float>()[i])
          << name << "[" << i << "]";
  }
  // Both continue identically from the same parameters (SGD has no state).
  EXPECT_EQ(*(*trained)->step(x, y), *(*fresh)->step(x, y));

  EXPECT_EQ((*fresh)->parameter("optimizer/step").status().code(),
            gopt::runtime::StatusCode::kNotFound);
  Tensor wrong = Tensor::allocate(DType::kF32, {16, 3});
  auto set = (*fresh)->setParameter("fc.weight", wrong);
  EXPECT_FALSE(set.ok());
  EXPECT_NE(set.message().find("fc.weight"), std::string::npos)
      << set.message();
}

TEST_F(TrainerTest, BadBatchesAreNamedErrors) {
  auto trainer = Trainer::create(options_);
  ASSERT_TRUE(trainer.ok());
  Tensor x, y;
  makeBatch(6, x, y);
  Tensor shortLabels = Tensor::allocate(DType::kI64, {5});
  auto mismatch = (*trainer)->step(x, shortLabels);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("[6,1,4,4]"), std::string::npos)
      << mismatch.status().message();
  Tensor floatLabels = Tensor::allocate(DType::kF32, {6});
  auto badType = (*trainer)->step(x, floatLabels);
  ASSERT_FALSE(badType.ok());
  EXPECT_NE(badType.status().message().find("i64 or i32"), std::string::npos)
      << badType.status().message();
}

// A compiled training plan steps like its graph; evaluating it is refused
// by name, since evaluation needs the forward graph the plan no longer has.
TEST_F(TrainerTest, ATrainingPlanStepsButCannotEvaluate) {
  ModelLoadOptions load;
  load.pipeline = trainingPipeline(options_);
  auto plan = loadModelAsPlan(options_.model, load);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  TrainOptions fromPlan = options_;
  fromPlan.model = dir_ + "/step.gplan";
  ASSERT_TRUE(plan->saveToFile(fromPlan.model).ok());
  auto graph = Trainer::create(options_);
  auto compiled = Trainer::create(fromPlan);
  ASSERT_TRUE(graph.ok() && compiled.ok());
  Tensor x, y;
  makeBatch(6, x, y);
  EXPECT_EQ(*(*graph)->step(x, y), *(*compiled)->step(x, y));
  EvalResult r;
  gopt::runtime::Status s = (*compiled)->evaluateBatch(x, y, r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), gopt::runtime::StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("step.gplan' is a compiled training plan"),
            std::string::npos)
      << s.message();
}

TEST_F(TrainerTest, AGraphWithoutALossIsRefused) {
  options_.loss = "none";
  auto trainer = Trainer::create(options_);
  ASSERT_FALSE(trainer.ok());
  EXPECT_NE(trainer.status().message().find("no result named 'loss'"),
            std::string::npos)
      << trainer.status().message();
}

} // namespace
