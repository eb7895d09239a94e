//===- Train.cpp - gopt-run --train and --data-only -----------------------===//
//
// A training run: the model is compiled twice, as a training step (loss,
// autodiff and optimizer passes; parameters and optimizer state are plan
// state the session keeps and updates in place) and, for --eval, as the
// forward graph with the same parameters as read-only state. Batches come
// from the runtime's BatchLoader; the report says whether the run waited
// on its input (data-bound) or on the graph (compute-bound).
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Train.h"
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/Tooling/NpyFileName.h"
#include "gopt/Tooling/Profile.h"

#include "gopt/runtime/DataPipeline.h"
#include "gopt/runtime/Npy.h"
#include "gopt/runtime/Session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

namespace gopt::tooling {

using namespace gopt::runtime;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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

/// Opens a data spec (see TrainOptions::data). `inputShape` (without the
/// batch) sizes fake and TFRecord data.
StatusOr<std::shared_ptr<Dataset>> openData(const std::string &spec,
                                            const Shape &inputShape,
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
                               inputShape, normalize);
  }
  // One random batch of examples, repeated: a model that learns fits it, so
  // the loss falls without real data.
  if (spec == "fake")
    return openFakeDataset(inputShape, numClasses, 1024 * o.batch, o.batch);
  return invalidArgument("unknown data '", spec,
                         "' (expected fashion-mnist, idx:IMAGES,LABELS, "
                         "npy:INPUTS,LABELS, tfrecord:FILES or fake)");
}

/// --loss-scale, defaulting to dynamic for f16 (whose gradients underflow)
/// and none for bf16, which has f32's exponent range.
std::string lossScaleOf(const TrainOptions &o) {
  if (!o.lossScale.empty())
    return o.lossScale;
  return o.precision == "f16" ? "dynamic" : "none";
}

/// The initial scale of "dynamic[:INITIAL]": 2^16 as PyTorch's GradScaler.
std::string initialLossScale(const std::string &lossScale) {
  size_t colon = lossScale.find(':');
  return colon == std::string::npos ? "65536" : lossScale.substr(colon + 1);
}

/// "dynamic loss scaling (initially 65536)" or "fixed loss scale 128".
std::string describeLossScale(const std::string &lossScale) {
  if (lossScale.rfind("dynamic", 0) != 0)
    return "fixed loss scale " + lossScale;
  return "dynamic loss scaling (initially " + initialLossScale(lossScale) + ")";
}

std::string trainPipeline(const TrainOptions &o) {
  std::string p =
      "builtin.module(func.func(gopt-strip-debug-ops{training=true},"
      "gopt-lift-params{batch-norm-stats=true},gopt-train-batch-norm,";
  if (o.loss != "none")
    p += "gopt-add-loss{kind=" + o.loss + "},";
  // The loss and its gradient stay f32 (deny-listed); the parameters stay
  // f32 and are cast at their use, so their gradients come back f32.
  if (o.precision != "f32")
    p += "gopt-mixed-precision{type=" + o.precision + "},";
  std::string scale = lossScaleOf(o);
  if (scale.rfind("dynamic", 0) == 0)
    p += "gopt-loss-scaling{init-scale=" + initialLossScale(scale) + "},";
  else if (scale != "none")
    p += "gopt-loss-scaling{dynamic=false init-scale=" + scale + "},";
  p += "gopt-autodiff,gopt-add-optimizer{kind=" + o.optimizer;
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

StatusOr<float> readScalarState(const Session &session,
                                const std::string &name) {
  GOPT_ASSIGN_OR_RETURN(Tensor t, session.state(name));
  if (t.dtype() != DType::kF32 || t.numElements() != 1)
    return internalError("state '", name, "' is not an f32 scalar");
  return t.data<float>()[0];
}

std::string evalPipeline() {
  return "builtin.module(func.func(gopt-strip-debug-ops{inference=true},"
         "gopt-lift-params{batch-norm-stats=true},"
         "canonicalize,gopt-fold-constants,gopt-fuse-conv-bias-activation,"
         "canonicalize))";
}

/// Names of the states a plan binds, with whether each is updated (trained
/// parameters and optimizer state) or read-only.
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

Status saveParams(Session &session, const std::vector<std::string> &names,
                  const std::string &dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return invalidArgument("--save-params: cannot create directory '", dir,
                           "': ", std::strerror(errno));
  for (const std::string &name : names) {
    GOPT_ASSIGN_OR_RETURN(Tensor value, session.state(name));
    // Written then renamed: an interrupted save never leaves a half-written
    // parameter file behind.
    std::string path = dir + "/" + npyFileName(name);
    std::string tmp = path + ".tmp";
    GOPT_RETURN_IF_ERROR(writeNpy(tmp, value));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return invalidArgument("--save-params: cannot rename '", tmp, "' to '",
                             path, "': ", std::strerror(errno));
  }
  return Status::success();
}

Status loadParams(Session &session, const std::vector<std::string> &names,
                  const std::string &dir) {
  for (const std::string &name : names) {
    std::string path = dir + "/" + npyFileName(name);
    StatusOr<Tensor> value = readNpy(path);
    if (!value.ok())
      return invalidArgument("--load-params: parameter '", name,
                             "': ", value.status().message());
    Status set = session.setState(name, *value);
    if (!set.ok())
      return invalidArgument("--load-params: '", path, "': ", set.message());
  }
  return Status::success();
}

/// Copies the named states from one session to another (trained parameters
/// into the evaluation graph).
Status copyStates(Session &from, Session &to,
                  const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    GOPT_ASSIGN_OR_RETURN(Tensor value, from.state(name));
    GOPT_RETURN_IF_ERROR(to.setState(name, value));
  }
  return Status::success();
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

/// The class count of a softmax cross-entropy loss (its logits' last
/// dimension), which sizes fake labels; 10 when the plan has none.
int64_t numClassesOf(const Plan &plan) {
  for (const plan::Op &op : plan.proto().ops())
    if (op.kind() == "softmax_cross_entropy" && op.inputs_size() > 0) {
      const plan::TensorInfo &logits = plan.proto().tensors(op.inputs(0));
      if (logits.shape_size() == 2 && logits.shape(1) > 0)
        return logits.shape(1);
    }
  return 10;
}

/// Labels as the plan's label input wants them (i64 from the loader).
StatusOr<Tensor> convertLabels(const Tensor &labels, DType dtype) {
  if (dtype == DType::kI64)
    return labels;
  if (dtype != DType::kI32)
    return invalidArgument("the graph's 'labels' input has dtype ",
                           dtypeName(dtype), "; expected i64 or i32");
  Tensor out = Tensor::allocate(DType::kI32, labels.shape());
  for (int64_t i = 0; i < labels.numElements(); ++i)
    out.data<int32_t>()[i] = static_cast<int32_t>(labels.data<int64_t>()[i]);
  return out;
}

int64_t argmaxRow(const float *row, int64_t n) {
  return std::max_element(row, row + n) - row;
}

struct EvalResult {
  int64_t correct = 0, total = 0;
  double lossSum = 0;
};

StatusOr<EvalResult> evaluate(Session &eval, const std::string &inputName,
                              std::shared_ptr<Dataset> data, int64_t batch) {
  LoaderOptions lo;
  lo.batchSize = batch;
  lo.dropLast = false;
  lo.shuffle = false;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  std::string outputName = eval.outputs().front().name;
  EvalResult r;
  while (true) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> b, loader->next());
    if (!b)
      break;
    GOPT_RETURN_IF_ERROR(eval.bindInput(inputName, b->inputs));
    GOPT_RETURN_IF_ERROR(eval.run());
    GOPT_ASSIGN_OR_RETURN(Tensor logits, eval.output(outputName));
    if (logits.shape().size() != 2 || logits.dtype() != DType::kF32)
      return invalidArgument("--eval needs [batch, classes] f32 logits, "
                             "output '",
                             outputName, "' has shape ",
                             shapeToString(logits.shape()));
    int64_t n = logits.shape()[0], c = logits.shape()[1];
    for (int64_t i = 0; i < n; ++i) {
      const float *row = logits.data<float>() + i * c;
      int64_t label = b->labels.data<int64_t>()[i];
      r.correct += argmaxRow(row, c) == label;
      if (label >= 0 && label < c) {
        float mx = *std::max_element(row, row + c);
        double sum = 0;
        for (int64_t j = 0; j < c; ++j)
          sum += std::exp(row[j] - mx);
        r.lossSum += std::log(sum) - (row[label] - mx);
      }
    }
    r.total += n;
  }
  return r;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Where a step's op time goes: the forward pass, the backward pass (ops
/// named "<forward op>/grad" by --gopt-autodiff, and the loss gradient),
/// the optimizer updates, and layout reorders the schedule added.
void printTimeSplit(const std::vector<OpProfile> &rows) {
  double forward = 0, backward = 0, optimizer = 0, reorder = 0;
  for (const OpProfile &p : rows) {
    bool grad = p.name.size() >= 5 &&
                p.name.compare(p.name.size() - 5, 5, "/grad") == 0;
    if (p.kind == "sgd_update" || p.kind == "adam_update" ||
        p.kind == "all_finite" || p.kind == "select" ||
        p.kind == "loss_scale_update")
      optimizer += p.totalMs;
    else if (p.kind == "reorder")
      reorder += p.totalMs;
    else if (grad || p.kind.find("_grad") != std::string::npos ||
             p.kind.find("backprop") != std::string::npos)
      backward += p.totalMs;
    else
      forward += p.totalMs;
  }
  double total = forward + backward + optimizer + reorder;
  if (total <= 0)
    return;
  std::printf("\nop time: forward %.0f%%, backward %.0f%%, optimizer %.0f%%, "
              "layout reorders %.0f%%\n",
              100 * forward / total, 100 * backward / total,
              100 * optimizer / total, 100 * reorder / total);
}

/// The training loader: the flags' batch, shuffling and prefetching; whole
/// epochs, or unlimited ones when --steps counts the run.
LoaderOptions loaderOptions(const TrainOptions &o) {
  LoaderOptions lo;
  lo.batchSize = o.batch;
  lo.shuffle = o.shuffle;
  lo.seed = o.seed;
  lo.prefetch = o.prefetch;
  lo.threads = o.loaderThreads;
  lo.numEpochs = o.steps > 0 ? LoaderOptions::kUnlimitedEpochs : o.epochs;
  return lo;
}

StatusOr<bool> runDataOnlyMode(const TrainOptions &o) {
  // Fake and TFRecord data take their example shape from the model's first
  // input when a model is given, else MNIST's.
  Shape shape = {1, 28, 28};
  if (!o.model.empty()) {
    ModelLoadOptions load;
    load.pipeline = evalPipeline();
    GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(o.model, load));
    if (plan.proto().inputs_size() == 0)
      return invalidArgument("'", o.model, "' has no inputs");
    const plan::TensorInfo &in =
        plan.proto().tensors(plan.proto().inputs(0).tensor());
    shape.assign(in.shape().begin() + std::min(1, in.shape_size()),
                 in.shape().end());
  }
  GOPT_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> data,
                        openData(o.data, shape, 10, o));
  LoaderOptions lo = loaderOptions(o);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  GOPT_ASSIGN_OR_RETURN(DataSpeed speed,
                        runDataOnly(*loader, o.steps, /*warmupBatches=*/5));
  std::printf("data: %s\n", data->describe().c_str());
  std::printf("input pipeline alone (--data-only): %lld batches of %lld in "
              "%.3f s\n",
              static_cast<long long>(speed.batches),
              static_cast<long long>(o.batch), speed.seconds);
  std::printf("  %.1f batches/s, %.0f samples/s (%d loader threads, "
              "prefetch %d)\n",
              speed.batchesPerSecond, speed.samplesPerSecond, o.loaderThreads,
              o.prefetch);
  return true;
}

} // namespace

StatusOr<bool> runTraining(const TrainOptions &o) {
  if (o.dataOnly)
    return runDataOnlyMode(o);

  ModelLoadOptions load;
  load.backend = o.backend;
  load.batchSize = o.batch;
  load.pipeline = trainPipeline(o);
  auto compileStart = Clock::now();
  GOPT_ASSIGN_OR_RETURN(Plan trainPlan, loadModelAsPlan(o.model, load));
  double compileSeconds = secondsSince(compileStart);
  warnIfReducedPrecisionIsSlow(trainPlan, o.backend);
  bool hasLoss = false;
  for (const plan::Binding &b : trainPlan.proto().outputs())
    hasLoss |= b.name() == "loss";
  if (!hasLoss)
    return invalidArgument("'", o.model,
                           "': the training plan has no output named 'loss'");
  std::vector<std::string> params = paramNames(trainPlan);

  SessionOptions so;
  so.backend = o.backend;
  so.threads = o.threads;
  so.batchSize = o.batch;
  so.seed = o.seed;
  so.memoryLimitBytes = o.memoryLimit;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::create(trainPlan, so));
  GOPT_ASSIGN_OR_RETURN(TensorDesc dataInput, findDataInput(*session, o.model));
  DType labelType = DType::kI64;
  for (const TensorDesc &in : session->inputs())
    if (in.name == "labels")
      labelType = in.dtype;
  Shape exampleShape(dataInput.shape.begin() + 1, dataInput.shape.end());
  int64_t numClasses = numClassesOf(trainPlan);
  if (!o.loadParams.empty())
    GOPT_RETURN_IF_ERROR(loadParams(*session, params, o.loadParams));

  GOPT_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> data,
                        openData(o.data, exampleShape, numClasses, o));
  if (data->inputShape() != exampleShape)
    return invalidArgument("data '", o.data, "' has examples of shape ",
                           shapeToString(data->inputShape()), ", input '",
                           dataInput.name, "' of '", o.model, "' expects ",
                           shapeToString(exampleShape));

  // Evaluation: the forward graph with the trained parameters as state.
  std::unique_ptr<Session> evalSession;
  std::shared_ptr<Dataset> evalData;
  std::string evalInput;
  if (o.eval) {
    std::string spec = o.evalData;
    if (spec.empty()) {
      if (o.data != "fashion-mnist")
        return invalidArgument("--eval needs --eval-data SPEC for data '",
                               o.data, "'");
      spec = "fashion-mnist-test";
    }
    GOPT_ASSIGN_OR_RETURN(evalData,
                          openData(spec, exampleShape, numClasses, o));
    ModelLoadOptions evalLoad = load;
    evalLoad.pipeline = evalPipeline();
    GOPT_ASSIGN_OR_RETURN(Plan evalPlan, loadModelAsPlan(o.model, evalLoad));
    SessionOptions eo = so;
    eo.batchSize = 500;
    GOPT_ASSIGN_OR_RETURN(evalSession, Session::create(evalPlan, eo));
    GOPT_ASSIGN_OR_RETURN(TensorDesc in, findDataInput(*evalSession, o.model));
    evalInput = in.name;
  }

  LoaderOptions lo = loaderOptions(o);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchLoader> loader,
                        BatchLoader::create(data, lo));
  int64_t totalSteps =
      o.steps > 0 ? o.steps : loader->batchesPerEpoch() * o.epochs;

  std::string scaling = lossScaleOf(o);
  std::printf(
      "training %s: %s, %s (lr %s), batch %lld, %lld steps "
      "(%lld per epoch), backend %s%s\n",
      o.model.c_str(), o.loss == "none" ? "graph's loss" : o.loss.c_str(),
      o.optimizer.c_str(), o.lr > 0 ? std::to_string(o.lr).c_str() : "default",
      static_cast<long long>(o.batch), static_cast<long long>(totalSteps),
      static_cast<long long>(loader->batchesPerEpoch()), o.backend.c_str(),
      o.precision == "f32"
          ? ""
          : (", " + o.precision + " mixed precision" +
             (scaling == "none" ? std::string()
                                : ", " + describeLossScale(scaling)))
                .c_str());
  std::printf("data: %s\n", data->describe().c_str());
  std::printf("compiled the training step in %.2f s: %zu parameters, "
              "%d state tensors\n",
              compileSeconds, params.size(), trainPlan.proto().states_size());
  std::fflush(stdout);

  // Dynamic loss scaling: a step whose scale went down was skipped.
  bool dynamicScale = scaling.rfind("dynamic", 0) == 0;
  float lossScale = 0;
  int64_t skippedSteps = 0;
  if (dynamicScale) {
    GOPT_ASSIGN_OR_RETURN(lossScale,
                          readScalarState(*session, "optimizer/loss_scale"));
  }

  bool tty = isatty(STDOUT_FILENO);
  std::vector<double> stepSeconds;
  double computeSeconds = 0, lossWindow = 0;
  int64_t windowSteps = 0, samples = 0;
  auto runStart = Clock::now(), lastProgress = runStart;
  for (int64_t step = 1; step <= totalSteps; ++step) {
    GOPT_ASSIGN_OR_RETURN(std::optional<Batch> batch, loader->next());
    if (!batch)
      break;
    auto stepStart = Clock::now();
    GOPT_RETURN_IF_ERROR(session->bindInput(dataInput.name, batch->inputs));
    GOPT_ASSIGN_OR_RETURN(Tensor labels,
                          convertLabels(batch->labels, labelType));
    GOPT_RETURN_IF_ERROR(session->setInput("labels", labels));
    GOPT_RETURN_IF_ERROR(session->run());
    GOPT_ASSIGN_OR_RETURN(Tensor lossTensor, session->output("loss"));
    double seconds = secondsSince(stepStart);
    stepSeconds.push_back(seconds);
    computeSeconds += seconds;
    samples += batch->inputs.shape()[0];
    float loss = lossTensor.data<float>()[0];
    if (dynamicScale) {
      GOPT_ASSIGN_OR_RETURN(float scale,
                            readScalarState(*session, "optimizer/loss_scale"));
      skippedSteps += scale < lossScale;
      lossScale = scale;
    }
    if (!std::isfinite(loss)) {
      if (tty)
        std::printf("\r\033[K");
      std::fprintf(stderr,
                   "gopt-run: error: the loss is %s at step %lld (epoch "
                   "%lld); parameters not saved\n",
                   std::isnan(loss) ? "NaN" : "infinite",
                   static_cast<long long>(step),
                   static_cast<long long>(batch->epoch + 1));
      return false;
    }
    lossWindow += loss;
    ++windowSteps;
    if (step % o.logEvery == 0 || step == totalSteps) {
      if (tty)
        std::printf("\r\033[K");
      std::printf("epoch %lld step %lld/%lld  loss %.4f  %.0f samples/s",
                  static_cast<long long>(batch->epoch + 1),
                  static_cast<long long>(step),
                  static_cast<long long>(totalSteps), lossWindow / windowSteps,
                  samples / secondsSince(runStart));
      if (dynamicScale)
        std::printf("  loss scale %g (%lld skipped)", lossScale,
                    static_cast<long long>(skippedSteps));
      std::printf("\n");
      lossWindow = 0;
      windowSteps = 0;
      std::fflush(stdout);
    } else if (tty && secondsSince(lastProgress) > 0.2) {
      // Progress only on a terminal: logs stay quiet.
      std::printf("\r\033[K  epoch %lld step %lld/%lld  loss %.4f",
                  static_cast<long long>(batch->epoch + 1),
                  static_cast<long long>(step),
                  static_cast<long long>(totalSteps), loss);
      std::fflush(stdout);
      lastProgress = Clock::now();
    }
    bool epochEnd = batch->lastOfEpoch || step == totalSteps;
    if (epochEnd && evalSession) {
      GOPT_RETURN_IF_ERROR(
          copyStates(*session, *evalSession, stateNames(evalSession->plan())));
      GOPT_ASSIGN_OR_RETURN(EvalResult r,
                            evaluate(*evalSession, evalInput, evalData, 500));
      if (tty)
        std::printf("\r\033[K");
      std::printf("epoch %lld: test accuracy %.2f%% (%lld of %lld), test "
                  "loss %.4f\n",
                  static_cast<long long>(batch->epoch + 1),
                  100.0 * r.correct / std::max<int64_t>(1, r.total),
                  static_cast<long long>(r.correct),
                  static_cast<long long>(r.total),
                  r.lossSum / std::max<int64_t>(1, r.total));
      std::fflush(stdout);
    }
  }
  double wall = secondsSince(runStart);
  // The first steps create kernels' caches and fault pages in.
  size_t warm = std::min<size_t>(stepSeconds.size() / 10, 10);
  std::vector<double> steady(stepSeconds.begin() + warm, stepSeconds.end());
  double med = median(steady);
  LoaderStats stats = loader->stats();
  std::printf("\nsteps: %zu, samples: %lld, wall %.2f s\n", stepSeconds.size(),
              static_cast<long long>(samples), wall);
  std::printf("step time (median after %zu warm-up steps): %.3f ms = %.0f "
              "samples/s compute; end to end %.0f samples/s\n",
              warm, med * 1e3, med > 0 ? o.batch / med : 0.0, samples / wall);
  std::printf("prefetch queue: mean fill %.2f of %lld, empty at %.0f%% of "
              "steps, waited %.2f s in total\n",
              stats.meanFill, static_cast<long long>(stats.capacity),
              100.0 * stats.fractionEmpty, stats.totalWaitSeconds);
  std::printf("%s\n", classifyBottleneck(stats, computeSeconds).c_str());
  if (dynamicScale)
    std::printf("loss scaling: %lld of %zu steps skipped (inf/NaN "
                "gradients), final scale %g\n",
                static_cast<long long>(skippedSteps), stepSeconds.size(),
                lossScale);
  if (o.profile) {
    std::vector<OpProfile> rows = sortedProfiles(*session);
    printTimeSplit(rows);
    printProfile(rows);
  }
  if (!o.saveParams.empty()) {
    GOPT_RETURN_IF_ERROR(saveParams(*session, params, o.saveParams));
    std::printf("saved %zu parameters to %s/\n", params.size(),
                o.saveParams.c_str());
  }
  return true;
}

} // namespace gopt::tooling
