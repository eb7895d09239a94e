//===- Trainer.cpp - A compiled training step, one batch at a time --------===//
//
// The model is compiled twice: as a training step (loss, autodiff and
// optimizer passes; parameters and optimizer state are plan state the
// session keeps and updates in place) and, on the first evaluation, as the
// forward graph with the same parameters as read-only state.
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Trainer.h"
#include "gopt/Tooling/FileExtension.h"
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/Tooling/NpyFileName.h"

#include "gopt/runtime/Collectives.h"
#include "gopt/runtime/Npy.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace gopt::tooling {

using namespace gopt::runtime;

namespace {

constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr const char *kLossScaleState = "optimizer/loss_scale";

std::vector<std::string> splitComma(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

/// The initial scale of "dynamic[:INITIAL]": 2^16 as PyTorch's GradScaler.
std::string initialLossScale(const std::string &lossScale) {
  size_t colon = lossScale.find(':');
  return colon == std::string::npos ? "65536" : lossScale.substr(colon + 1);
}

StatusOr<float> readScalarState(const Session &session,
                                const std::string &name) {
  GOPT_ASSIGN_OR_RETURN(Tensor t, session.state(name));
  if (t.dtype() != DType::kF32 || t.numElements() != 1)
    return internalError("state '", name, "' is not an f32 scalar");
  return t.data<float>()[0];
}

std::vector<std::string> stateNames(const Plan &plan) {
  std::vector<std::string> names;
  for (const plan::StateBinding &b : plan.proto().states())
    names.push_back(b.name());
  return names;
}

/// The parameters of a training plan: states that are not optimizer state
/// (those are named "<param>/<slot>" or "optimizer/...").
std::vector<std::string> paramNames(const Plan &plan) {
  std::vector<std::string> names = stateNames(plan), params;
  for (const std::string &name : names) {
    bool isSlot = name.rfind("optimizer/", 0) == 0;
    for (const std::string &other : names)
      if (name.size() > other.size() + 1 && name.rfind(other + "/", 0) == 0)
        isSlot = true;
    if (!isSlot)
      params.push_back(name);
  }
  return params;
}

/// The batch input of a plan: its one input other than "labels".
StatusOr<TensorDesc> findDataInput(const Session &session,
                                   const std::string &model) {
  std::vector<TensorDesc> data;
  for (const TensorDesc &in : session.inputs())
    if (in.name != "labels")
      data.push_back(in);
  if (data.size() != 1)
    return invalidArgument("'", model,
                           "': training needs one data input besides "
                           "'labels', the graph has ",
                           data.size());
  return data.front();
}

int64_t numClassesOf(const Plan &plan) {
  for (const plan::Op &op : plan.proto().ops())
    if (op.kind() == "softmax_cross_entropy" && op.inputs_size() > 0) {
      const plan::TensorInfo &logits = plan.proto().tensors(op.inputs(0));
      if (logits.shape_size() == 2 && logits.shape(1) > 0)
        return logits.shape(1);
    }
  return 10;
}

/// Labels as the plan's label input wants them.
StatusOr<Tensor> convertLabels(const Tensor &labels, DType dtype) {
  if (labels.dtype() == dtype)
    return labels;
  if (labels.dtype() != DType::kI64 && labels.dtype() != DType::kI32)
    return invalidArgument("labels have dtype ", dtypeName(labels.dtype()),
                           "; expected i64 or i32");
  if (dtype != DType::kI64 && dtype != DType::kI32)
    return invalidArgument("the graph's 'labels' input has dtype ",
                           dtypeName(dtype), "; expected i64 or i32");
  Tensor out = Tensor::allocate(dtype, labels.shape());
  for (int64_t i = 0; i < labels.numElements(); ++i) {
    int64_t label = labels.dtype() == DType::kI64 ? labels.data<int64_t>()[i]
                                                  : labels.data<int32_t>()[i];
    if (dtype == DType::kI64)
      out.data<int64_t>()[i] = label;
    else
      out.data<int32_t>()[i] = static_cast<int32_t>(label);
  }
  return out;
}

int64_t labelAt(const Tensor &labels, int64_t i) {
  return labels.dtype() == DType::kI64 ? labels.data<int64_t>()[i]
                                       : labels.data<int32_t>()[i];
}

} // namespace

StatusOr<std::shared_ptr<Dataset>> openTrainingData(const std::string &spec,
                                                    const Shape &exampleShape,
                                                    int64_t numClasses,
                                                    const TrainOptions &o) {
  NormalizeOptions normalize;
  normalize.mean = o.normalizeMean;
  normalize.stddev = o.normalizeStd;
  std::string kind = spec.substr(0, spec.find(':'));
  std::string rest = spec.find(':') == std::string::npos
                         ? ""
                         : spec.substr(spec.find(':') + 1);
  if (spec == "fashion-mnist" || spec == "fashion-mnist-test") {
    std::string prefix = std::string(kFashionMnistDir) + "/" +
                         (spec == "fashion-mnist" ? "train" : "t10k");
    struct stat st;
    if (stat((prefix + "-images-idx3-ubyte.gz").c_str(), &st) != 0)
      return notFound("Fashion-MNIST is not installed (expected ", prefix,
                      "-images-idx3-ubyte.gz; apt-get install "
                      "dataset-fashion-mnist)");
    return openIdxDataset(prefix + "-images-idx3-ubyte.gz",
                          prefix + "-labels-idx1-ubyte.gz", normalize);
  }
  if (kind == "idx" || kind == "npy") {
    std::vector<std::string> files = splitComma(rest);
    if (files.size() != 2 || files[0].empty() || files[1].empty())
      return invalidArgument("data '", spec, "': expects ", kind,
                             ":INPUTS,LABELS");
    return kind == "idx" ? openIdxDataset(files[0], files[1], normalize)
                         : openNpyDataset(files[0], files[1], normalize);
  }
  if (kind == "tfrecord") {
    if (rest.empty())
      return invalidArgument("data '", spec, "': expects tfrecord:FILE[,...]");
    return openTfRecordDataset(splitComma(rest), o.imageFeature, o.labelFeature,
                               exampleShape, normalize);
  }
  // One random batch of examples, repeated: a model that learns fits it, so
  // the loss falls without real data.
  if (spec == "fake")
    return openFakeDataset(exampleShape, numClasses, 1024 * o.batch, o.batch);
  return invalidArgument("unknown data '", spec,
                         "' (expected fashion-mnist, idx:IMAGES,LABELS, "
                         "npy:INPUTS,LABELS, tfrecord:FILES or fake)");
}

LoaderOptions trainingLoaderOptions(const TrainOptions &o) {
  LoaderOptions lo;
  lo.batchSize = o.batch;
  lo.shuffle = o.shuffle;
  lo.seed = o.seed;
  lo.prefetch = o.prefetch;
  lo.threads = o.loaderThreads;
  lo.numEpochs = o.steps > 0 ? LoaderOptions::kUnlimitedEpochs : o.epochs;
  return lo;
}

std::string effectiveLossScale(const TrainOptions &o) {
  if (!o.lossScale.empty())
    return o.lossScale;
  return o.precision == "f16" ? "dynamic" : "none";
}

std::string describeLossScale(const std::string &lossScale) {
  if (lossScale.rfind("dynamic", 0) != 0)
    return "fixed loss scale " + lossScale;
  return "dynamic loss scaling (initially " + initialLossScale(lossScale) + ")";
}

// NHWC on the CPU: oneDNN's conv gradient kernels (bf16 on AMX above all)
// and gopt's pooling, relu and bias-gradient loops then read and write the
// activations as they are, where from NCHW every gradient op reorders its
// operands to blocked layouts and back. Elsewhere the graph's own.
static std::string trainingLayout(const TrainOptions &o) {
  if (o.layout != "auto")
    return o.layout;
  return o.backend == "cpu" ? "NHWC" : "";
}

std::string trainingPipeline(const TrainOptions &o) {
  std::string p =
      "builtin.module(func.func(gopt-strip-debug-ops{training=true},"
      "gopt-lift-params{batch-norm-stats=true},gopt-train-batch-norm,";
  // After lift-params: the parameters keep the graph's layout (saved and
  // loaded as they are, shared with --eval's forward graph); transposes of
  // the filters join the step.
  std::string layout = trainingLayout(o);
  if (!layout.empty())
    p += "gopt-convert-layout{layout=" + layout + "},canonicalize,";
  if (o.loss != "none")
    p += "gopt-add-loss{kind=" + o.loss + "},";
  // The loss and its gradient stay f32 (deny-listed); the parameters stay
  // f32 and are cast at their use, so their gradients come back f32.
  if (o.precision != "f32")
    p += "gopt-mixed-precision{type=" + o.precision + "},";
  std::string scale = effectiveLossScale(o);
  if (scale.rfind("dynamic", 0) == 0)
    p += "gopt-loss-scaling{init-scale=" + initialLossScale(scale) + "},";
  else if (scale != "none")
    p += "gopt-loss-scaling{dynamic=false init-scale=" + scale + "},";
  p += "gopt-autodiff,";
  // Several replicas: the gradients are averaged across them (in buckets)
  // before the optimizer, so every replica applies the same update. One
  // replica compiles the same graph as before.
  if (o.communicator && o.communicator->size() > 1) {
    char bucket[32];
    std::snprintf(bucket, sizeof bucket, "%g", o.bucketMb);
    p += std::string("gopt-data-parallel{bucket-mb=") + bucket +
         (o.syncBatchNorm ? " sync-batch-norm=true" : "") + "},";
  }
  p += "gopt-add-optimizer{kind=" + o.optimizer;
  if (o.lr > 0)
    p += " lr=" + std::to_string(o.lr);
  if (o.momentum > 0)
    p += " momentum=" + std::to_string(o.momentum);
  if (o.weightDecay > 0)
    p += " weight-decay=" + std::to_string(o.weightDecay);
  p += "},canonicalize,cse,gopt-fold-constants,"
       "gopt-fuse-conv-bias-activation,canonicalize))";
  return p;
}

std::string evaluationPipeline() {
  return "builtin.module(func.func(gopt-strip-debug-ops{inference=true},"
         "gopt-lift-params{batch-norm-stats=true},"
         "canonicalize,gopt-fold-constants,gopt-fuse-conv-bias-activation,"
         "canonicalize))";
}

StatusOr<Plan> compileTrainingPlan(const TrainOptions &o) {
  ModelLoadOptions load;
  load.backend = o.backend;
  load.batchSize = o.batch;
  load.pipeline = trainingPipeline(o);
  GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(o.model, load));
  bool hasLoss = false;
  for (const plan::Binding &b : plan.proto().outputs())
    hasLoss |= b.name() == "loss";
  if (!hasLoss)
    return invalidArgument("'", o.model,
                           "': the training plan has no output named 'loss'");
  return plan;
}

Trainer::~Trainer() = default;

StatusOr<std::unique_ptr<Trainer>> Trainer::create(const TrainOptions &o) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->options_ = o;
  auto compileStart = std::chrono::steady_clock::now();
  GOPT_ASSIGN_OR_RETURN(Plan plan, compileTrainingPlan(o));
  t->compileSeconds_ = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - compileStart)
                           .count();
  warnIfReducedPrecisionIsSlow(plan, o.backend);
  t->params_ = paramNames(plan);
  t->numClasses_ = numClassesOf(plan);

  SessionOptions so;
  so.backend = o.backend;
  so.threads = o.threads;
  so.batchSize = o.batch;
  so.seed = o.seed;
  so.memoryLimitBytes = o.memoryLimit;
  so.communicator = o.communicator;
  GOPT_ASSIGN_OR_RETURN(t->session_, Session::create(plan, so));
  GOPT_ASSIGN_OR_RETURN(t->dataInput_, findDataInput(*t->session_, o.model));
  for (const TensorDesc &in : t->session_->inputs())
    if (in.name == "labels")
      t->labelType_ = in.dtype;
  t->dynamicScale_ = effectiveLossScale(o).rfind("dynamic", 0) == 0;
  if (t->dynamicScale_) {
    GOPT_ASSIGN_OR_RETURN(t->lossScale_,
                          readScalarState(*t->session_, kLossScaleState));
  }
  return t;
}

Shape Trainer::exampleShape() const {
  return Shape(dataInput_.shape.begin() + 1, dataInput_.shape.end());
}

int Trainer::stateCount() const {
  return session_->plan().proto().states_size();
}

StatusOr<float> Trainer::step(const Tensor &inputs, const Tensor &labels) {
  if (inputs.shape().empty() || labels.shape().size() != 1 ||
      labels.shape()[0] != inputs.shape()[0])
    return invalidArgument("a training step needs inputs [B, ...] and labels "
                           "[B]; got inputs ",
                           shapeToString(inputs.shape()), " and labels ",
                           shapeToString(labels.shape()));
  GOPT_RETURN_IF_ERROR(session_->bindInput(dataInput_.name, inputs));
  GOPT_ASSIGN_OR_RETURN(Tensor converted, convertLabels(labels, labelType_));
  GOPT_RETURN_IF_ERROR(session_->setInput("labels", converted));
  GOPT_RETURN_IF_ERROR(session_->run());
  evalSynced_ = false;
  GOPT_ASSIGN_OR_RETURN(Tensor loss, session_->output("loss"));
  if (dynamicScale_) {
    GOPT_ASSIGN_OR_RETURN(float scale,
                          readScalarState(*session_, kLossScaleState));
    skippedSteps_ += scale < lossScale_;
    lossScale_ = scale;
  }
  return loss.data<float>()[0];
}

Status Trainer::createEvalSession() {
  // Evaluation runs the forward graph, compiled from the model file; a plan
  // file holds only the training step (its outputs are the loss and the
  // updated state, not logits).
  const std::string &model = options_.model;
  if (fileExtension(model) == ".gplan")
    return unimplemented("'", model,
                         "' is a compiled training plan: evaluation compiles "
                         "the forward graph, so train from the graph file "
                         "(.onnx, .mlir, .pb) to evaluate");
  ModelLoadOptions load;
  load.backend = options_.backend;
  load.batchSize = 500;
  load.pipeline = evaluationPipeline();
  GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(options_.model, load));
  SessionOptions eo = session_->options();
  eo.batchSize = 500;
  GOPT_ASSIGN_OR_RETURN(evalSession_, Session::create(plan, eo));
  GOPT_ASSIGN_OR_RETURN(TensorDesc in,
                        findDataInput(*evalSession_, options_.model));
  evalInput_ = in.name;
  return Status::success();
}

Status Trainer::evaluateBatch(const Tensor &inputs, const Tensor &labels,
                              EvalResult &r) {
  if (!evalSession_)
    GOPT_RETURN_IF_ERROR(createEvalSession());
  if (!evalSynced_) {
    // The trained parameters, into the forward graph's read-only state.
    for (const plan::StateBinding &b : evalSession_->plan().proto().states()) {
      GOPT_ASSIGN_OR_RETURN(Tensor value, session_->state(b.name()));
      GOPT_RETURN_IF_ERROR(evalSession_->setState(b.name(), value));
    }
    evalSynced_ = true;
  }
  if (inputs.shape().empty() || labels.shape().size() != 1 ||
      labels.shape()[0] != inputs.shape()[0] ||
      (labels.dtype() != DType::kI64 && labels.dtype() != DType::kI32))
    return invalidArgument("evaluation needs inputs [B, ...] and i64 or i32 "
                           "labels [B]; got inputs ",
                           shapeToString(inputs.shape()), " and labels ",
                           dtypeName(labels.dtype()),
                           shapeToString(labels.shape()));
  GOPT_RETURN_IF_ERROR(evalSession_->bindInput(evalInput_, inputs));
  GOPT_RETURN_IF_ERROR(evalSession_->run());
  std::string outputName = evalSession_->outputs().front().name;
  GOPT_ASSIGN_OR_RETURN(Tensor logits, evalSession_->output(outputName));
  if (logits.shape().size() != 2 || logits.dtype() != DType::kF32)
    return invalidArgument("evaluation needs [batch, classes] f32 logits, "
                           "output '",
                           outputName, "' has shape ",
                           shapeToString(logits.shape()));
  int64_t n = logits.shape()[0], c = logits.shape()[1];
  for (int64_t i = 0; i < n; ++i) {
    const float *row = logits.data<float>() + i * c;
    int64_t label = labelAt(labels, i);
    r.correct += std::max_element(row, row + c) - row == label;
    if (label >= 0 && label < c) {
      float mx = *std::max_element(row, row + c);
      double sum = 0;
      for (int64_t j = 0; j < c; ++j)
        sum += std::exp(row[j] - mx);
      r.lossSum += std::log(sum) - (row[label] - mx);
    }
  }
  r.total += n;
  return Status::success();
}

StatusOr<EvalResult> Trainer::evaluate(std::shared_ptr<Dataset> data,
                                       int64_t batch) {
  LoaderOptions lo;
  lo.batchSize = batch;
  lo.dropLast = false;
  lo.shuffle = false;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  EvalResult r;
  while (true) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> b, loader->next());
    if (!b)
      return r;
    GOPT_RETURN_IF_ERROR(evaluateBatch(b->inputs, b->labels, r));
  }
}

StatusOr<Tensor> Trainer::parameter(const std::string &name) const {
  if (std::find(params_.begin(), params_.end(), name) == params_.end())
    return notFound("no parameter named '", name, "'");
  return session_->state(name);
}

Status Trainer::setParameter(const std::string &name, const Tensor &value) {
  if (std::find(params_.begin(), params_.end(), name) == params_.end())
    return notFound("no parameter named '", name, "'");
  evalSynced_ = false;
  return session_->setState(name, value);
}

Status Trainer::saveParameters(const std::string &dir) const {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return invalidArgument("cannot create directory '", dir,
                           "': ", std::strerror(errno));
  for (const std::string &name : params_) {
    GOPT_ASSIGN_OR_RETURN(Tensor value, session_->state(name));
    std::string path = dir + "/" + npyFileName(name);
    std::string tmp = path + ".tmp";
    GOPT_RETURN_IF_ERROR(writeNpy(tmp, value));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return invalidArgument("cannot rename '", tmp, "' to '", path,
                             "': ", std::strerror(errno));
  }
  return Status::success();
}

Status Trainer::loadParameters(const std::string &dir) {
  evalSynced_ = false;
  for (const std::string &name : params_) {
    std::string path = dir + "/" + npyFileName(name);
    StatusOr<Tensor> value = readNpy(path);
    if (!value.ok())
      return invalidArgument("parameter '", name,
                             "': ", value.status().message());
    Status set = session_->setState(name, *value);
    if (!set.ok())
      return invalidArgument("'", path, "': ", set.message());
  }
  return Status::success();
}

} // namespace gopt::tooling
