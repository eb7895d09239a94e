//===- Trainer.h - A compiled training step, one batch at a time -*- C++
//-*-===//
//
// The training step of `gopt-run --train` as an object: compiled once from a
// forward graph (loss, autodiff and optimizer passes), then stepped on
// batches the caller supplies. gopt-run's training loop, the Python API's
// TrainingSession and the data-parallel launcher all drive this class; none
// of them repeats how a model becomes a training plan.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_TRAINER_H
#define GOPT_TOOLING_TRAINER_H

#include "gopt/Tooling/Train.h"

#include "gopt/runtime/DataPipeline.h"
#include "gopt/runtime/Session.h"

#include <memory>
#include <string>
#include <vector>

namespace gopt::tooling {

// Accuracy and summed softmax cross-entropy of the forward graph's logits.
struct EvalResult {
  int64_t correct = 0, total = 0;
  double lossSum = 0;
  double accuracy() const { return total ? double(correct) / total : 0; }
  double meanLoss() const { return total ? lossSum / total : 0; }
};

// The training step of options.model as a plan: a graph file compiled with
// the training pipeline (loss, autodiff, optimizer; options.batch as the
// batch size), or a .gplan (a step compiled earlier, e.g. by --save-plan)
// read as it is.
runtime::StatusOr<runtime::Plan>
compileTrainingPlan(const TrainOptions &options);

class Trainer {
public:
  // Compiles options.model's training step (the forward graph for
  // evaluation is compiled on the first evaluate call). options.data,
  // loadParams and saveParams are the caller's: a Trainer steps on the
  // batches it is given.
  static runtime::StatusOr<std::unique_ptr<Trainer>>
  create(const TrainOptions &options);
  ~Trainer();

  // One optimizer step on `inputs` ([B, ...exampleShape()], f32) and
  // `labels` ([B], i64 or i32). Returns the loss; a NaN or infinite loss is
  // returned, not an error (the caller decides). `inputs` is read in place:
  // it must stay alive until the step returns.
  runtime::StatusOr<float> step(const runtime::Tensor &inputs,
                                const runtime::Tensor &labels);

  // Adds the forward graph's result on one batch to `result`, with the
  // current parameters; the batch may have any size.
  runtime::Status evaluateBatch(const runtime::Tensor &inputs,
                                const runtime::Tensor &labels,
                                EvalResult &result);
  // The whole dataset, in order, in batches of `batch`.
  runtime::StatusOr<EvalResult> evaluate(std::shared_ptr<runtime::Dataset> data,
                                         int64_t batch = 500);

  // The trained parameters (not the optimizer's state), in plan order.
  const std::vector<std::string> &parameterNames() const { return params_; }
  runtime::StatusOr<runtime::Tensor> parameter(const std::string &name) const;
  runtime::Status setParameter(const std::string &name,
                               const runtime::Tensor &value);
  // DIR/<name>.npy per parameter; each file is written then renamed, so an
  // interrupted save leaves no half-written file.
  runtime::Status saveParameters(const std::string &dir) const;
  runtime::Status loadParameters(const std::string &dir);

  const TrainOptions &options() const { return options_; }
  // The data input (besides "labels") and one example's shape.
  const runtime::TensorDesc &dataInput() const { return dataInput_; }
  runtime::Shape exampleShape() const;
  // Classes of the softmax cross-entropy loss (its logits' last dimension);
  // 10 when the graph has none.
  int64_t numClasses() const { return numClasses_; }
  double compileSeconds() const { return compileSeconds_; }
  int stateCount() const;

  // Dynamic loss scaling: the current scale and the steps skipped because
  // their gradients overflowed (0 and 0 without dynamic scaling).
  bool dynamicLossScaling() const { return dynamicScale_; }
  float lossScale() const { return lossScale_; }
  int64_t skippedSteps() const { return skippedSteps_; }

  // The training step's session (profiles, states).
  runtime::Session &session() { return *session_; }

private:
  Trainer() = default;
  runtime::Status createEvalSession();

  TrainOptions options_;
  std::unique_ptr<runtime::Session> session_, evalSession_;
  // Whether the evaluation session holds the current parameters.
  bool evalSynced_ = false;
  runtime::TensorDesc dataInput_;
  std::string evalInput_;
  runtime::DType labelType_ = runtime::DType::kI64;
  std::vector<std::string> params_;
  int64_t numClasses_ = 10;
  double compileSeconds_ = 0;
  bool dynamicScale_ = false;
  float lossScale_ = 0;
  int64_t skippedSteps_ = 0;
};

// Opens a data spec (TrainOptions::data's forms, and "fashion-mnist-test").
// `exampleShape` sizes fake and TFRecord examples, `numClasses` fake labels.
runtime::StatusOr<std::shared_ptr<runtime::Dataset>>
openTrainingData(const std::string &spec, const runtime::Shape &exampleShape,
                 int64_t numClasses, const TrainOptions &options);

// The training loader: the options' batch, shuffling, seed and prefetch;
// whole epochs, or endless ones when options.steps counts the run.
runtime::LoaderOptions trainingLoaderOptions(const TrainOptions &options);

// The pass pipelines that make a forward graph a training step, and the
// forward graph for evaluation.
std::string trainingPipeline(const TrainOptions &options);
std::string evaluationPipeline();

// "dynamic", "none" or a fixed scale: --loss-scale, or the precision's
// default (dynamic for f16, whose gradients underflow).
std::string effectiveLossScale(const TrainOptions &options);
// "dynamic loss scaling (initially 65536)" or "fixed loss scale 128".
std::string describeLossScale(const std::string &lossScale);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_TRAINER_H
