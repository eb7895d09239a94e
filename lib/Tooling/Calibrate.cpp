//===- Calibrate.cpp - gopt-run --calibrate -------------------------------===//
//
// How the intermediates are seen: gopt-run's copy of the plan turns every
// tensor it calibrates into a plan OUTPUT with a binding of its own, as if
// the graph returned it. Sessions already keep outputs in plain row-major
// buffers that live until the next run, and the cpu backend neither fuses
// across nor reuses the memory of an output, so each value is the one an
// unfused run computes; the runtime needs no observer hook, and no blocked
// oneDNN layout ever reaches this file (docs/architecture.md, Calibration).
//
// Histogram ranges: two passes over the same batches. The first collects
// min/max (all that minmax needs) and rejects non-finite values; the second
// fills a 2048-bin |x| histogram over [0, max|x| of the first pass]. The
// inputs are deterministic (files or seeded random data), so both passes see
// the same values. TensorRT's and onnxruntime's calibrators grow the
// histogram instead, re-binning old counts when a batch exceeds the range;
// that saves the second run but smears counts at every re-binning and makes
// the result depend on batch order. Calibration is offline, so the exact
// histogram is worth one more pass.
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Calibrate.h"
#include "gopt/Tooling/FakeData.h"
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/runtime/Npy.h"
#include "gopt/runtime/Session.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unistd.h>

namespace gopt::tooling {

using namespace runtime;

namespace {

bool isCalibratedOp(const std::string &kind) {
  static const std::set<std::string> kinds = {
      "conv2d", "matmul",   "add",      "bias_add",        "relu",  "relu6",
      "clip",   "max_pool", "avg_pool", "global_avg_pool", "concat"};
  return kinds.count(kind) > 0;
}

/// One plan tensor read after every run: from the inputs fed to the run
/// (graph inputs) or from an output binding.
struct Probe {
  std::string binding; // output binding; unused for inputs
  int input;           // index of the graph input, or -1
  size_t stat;         // index into the statistics, one per tensor name
};

struct Statistics {
  std::string name;
  float min = INFINITY, max = -INFINITY;
  std::optional<AbsHistogram> histogram;
};

/// The calibration batches: slices of the --input files along their first
/// dimension, random data for the other inputs.
class BatchSource : public CalibrationBatches {
public:
  static StatusOr<std::unique_ptr<BatchSource>>
  create(const CalibrateOptions &o, const std::vector<TensorDesc> &inputs);
  int64_t count() const override { return batches_; }
  StatusOr<std::vector<Tensor>> batch(int64_t k) const override;

private:
  std::vector<TensorDesc> descs_;
  std::vector<Tensor> files_; // per input: the whole file, or empty
  int64_t rows_ = 0;          // per run
  int64_t batches_ = 0;
};

StatusOr<std::unique_ptr<BatchSource>>
BatchSource::create(const CalibrateOptions &o,
                    const std::vector<TensorDesc> &in) {
  auto source = std::make_unique<BatchSource>();
  BatchSource &s = *source;
  s.descs_ = in;
  s.files_.resize(in.size());
  s.rows_ = o.batch;
  int64_t fileRows = -1;
  std::string firstInput; // NAME=FILE
  for (const auto &[name, file] : o.inputs) {
    auto it = std::find_if(in.begin(), in.end(),
                           [&](const TensorDesc &d) { return d.name == name; });
    if (it == in.end())
      return notFound("--input ", name, ": the model has no input named '",
                      name, "'");
    GOPT_ASSIGN_OR_RETURN(Tensor t, readNpy(file));
    if (t.rank() != static_cast<int64_t>(it->shape.size()) || t.rank() == 0)
      return invalidArgument("--input ", name, "=", file,
                             ": expects a batch of '", name, "' of rank ",
                             it->shape.size(),
                             " (the first dimension counts the samples), got ",
                             "shape ", shapeToString(t.shape()));
    if (fileRows >= 0 && t.dim(0) != fileRows)
      return invalidArgument("--input ", name, "=", file, " has ", t.dim(0),
                             " rows, --input ", firstInput, " has ", fileRows,
                             "; calibration inputs need one row per sample");
    fileRows = t.dim(0);
    firstInput = name + "=" + file;
    s.files_[it - in.begin()] = t;
  }
  if (fileRows < 0) {
    s.batches_ = o.maxBatches ? o.maxBatches : 1;
    return source;
  }
  if (fileRows < o.batch)
    return invalidArgument("--input ", firstInput, " has ", fileRows,
                           " rows, fewer than one batch (--batch ", o.batch,
                           ")");
  s.batches_ = fileRows / o.batch;
  if (o.maxBatches && o.maxBatches < s.batches_)
    s.batches_ = o.maxBatches;
  else if (fileRows % o.batch)
    std::fprintf(stderr,
                 "gopt-run: note: calibration ignores the last %lld rows of "
                 "the --input files (not a full batch of %lld)\n",
                 static_cast<long long>(fileRows % o.batch),
                 static_cast<long long>(o.batch));
  return source;
}

StatusOr<std::vector<Tensor>> BatchSource::batch(int64_t k) const {
  std::vector<Tensor> values;
  for (size_t i = 0; i < descs_.size(); ++i) {
    const Tensor &file = files_[i];
    if (file.empty()) {
      // Batch 0 gets the seeds a plain gopt-run uses; later batches others.
      uint32_t seed = static_cast<uint32_t>(i + 1 + k * descs_.size());
      values.push_back(fakeData(descs_[i], seed));
      continue;
    }
    Shape shape = file.shape();
    size_t rowBytes = file.byteSize() / shape[0];
    shape[0] = rows_;
    values.push_back(Tensor::view(
        file.dtype(), shape,
        const_cast<char *>(static_cast<const char *>(file.data())) +
            k * rows_ * rowBytes));
  }
  return values;
}

/// `t` as floats (f32 without a copy).
const float *asFloats(const Tensor &t, std::vector<float> &buffer) {
  if (t.dtype() == DType::kF32)
    return t.data<float>();
  buffer.resize(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    buffer[i] = t.dtype() == DType::kF16 ? halfToFloat(t.data<uint16_t>()[i])
                                         : bf16ToFloat(t.data<uint16_t>()[i]);
  return buffer.data();
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A progress line on stderr when it is a terminal (logs stay quiet),
/// cleared when calibration ends, also by an error.
class Progress {
public:
  Progress() : tty_(isatty(STDERR_FILENO)) {}
  ~Progress() { clear(); }
  void clear() {
    if (shown_)
      std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }
  void update(const char *pass, int64_t done, int64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (!tty_ || (shown_ && done < total && now - last_ < kInterval))
      return;
    std::fprintf(stderr, "\r\033[Kcalibrating: %s, batch %lld/%lld", pass,
                 static_cast<long long>(done), static_cast<long long>(total));
    std::fflush(stderr);
    shown_ = true;
    last_ = now;
  }

private:
  static constexpr std::chrono::milliseconds kInterval{100};
  bool tty_, shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

} // namespace

namespace {

/// Batches an embedder gave as tensors by input name.
class TensorBatches : public CalibrationBatches {
public:
  explicit TensorBatches(std::vector<std::vector<Tensor>> batches)
      : batches_(std::move(batches)) {}
  int64_t count() const override {
    return static_cast<int64_t>(batches_.size());
  }
  StatusOr<std::vector<Tensor>> batch(int64_t k) const override {
    return batches_[k];
  }

private:
  std::vector<std::vector<Tensor>> batches_;
};

} // namespace

CalibrationBatchFactory calibrationBatchesFromTensors(
    std::vector<std::map<std::string, Tensor>> batches) {
  return [batches = std::move(batches)](const std::vector<TensorDesc> &inputs)
             -> StatusOr<std::unique_ptr<CalibrationBatches>> {
    if (batches.empty())
      return invalidArgument("calibration needs at least one batch");
    std::vector<std::vector<Tensor>> ordered;
    for (size_t k = 0; k < batches.size(); ++k) {
      std::vector<Tensor> values;
      for (const TensorDesc &d : inputs) {
        auto it = batches[k].find(d.name);
        if (it == batches[k].end())
          return invalidArgument("calibration batch ", k,
                                 " has no value for input '", d.name, "'");
        values.push_back(it->second);
      }
      for (const auto &[name, value] : batches[k]) {
        bool known =
            std::any_of(inputs.begin(), inputs.end(),
                        [&](const TensorDesc &d) { return d.name == name; });
        if (!known)
          return notFound("calibration batch ", k,
                          ": the model has no input named '", name, "'");
      }
      ordered.push_back(std::move(values));
    }
    return std::unique_ptr<CalibrationBatches>(
        std::make_unique<TensorBatches>(std::move(ordered)));
  };
}

StatusOr<CalibrationResult>
calibratePlan(const Plan &loaded, const CalibrateOptions &o,
              const CalibrationBatchFactory &makeBatches,
              const std::string &modelName) {
  if (o.method == CalibrationMethod::kPercentile &&
      !(o.percentile > 0 && o.percentile <= 100))
    return invalidArgument("the percentile method expects a percentile in "
                           "(0, 100], got ",
                           o.percentile);
  // The tensors to calibrate; constants (weights) and state are not
  // activations.
  plan::Plan proto = loaded.proto();
  const int numTensors = proto.tensors_size();
  auto isActivation = [&](int t) {
    const plan::TensorInfo &info = proto.tensors(t);
    return isFloatDType(fromProtoDType(info.dtype())) &&
           (info.kind() == plan::TensorInfo::INPUT ||
            info.kind() == plan::TensorInfo::INTERMEDIATE ||
            info.kind() == plan::TensorInfo::OUTPUT);
  };
  std::vector<bool> selected(numTensors, false);
  bool anyOpTensor = false;
  for (const plan::Op &op : proto.ops()) {
    if (!isCalibratedOp(op.kind()))
      continue;
    for (const auto *list : {&op.inputs(), &op.outputs()})
      for (int t : *list)
        if (isActivation(t))
          selected[t] = anyOpTensor = true;
  }
  if (!anyOpTensor)
    return invalidArgument(
        "'", modelName,
        "' has no tensor to calibrate: no floating-point input or result of "
        "a conv2d, matmul, add, bias_add, relu, relu6, clip, max_pool, "
        "avg_pool, global_avg_pool or concat op");
  for (const plan::Binding &b : proto.inputs())
    selected[b.tensor()] = isActivation(b.tensor());

  // Session::inputs() lists the graph inputs in binding order.
  std::map<int, int> inputOfTensor;
  std::map<int, std::string> outputBinding;
  std::set<std::string> outputNames;
  for (int b = 0; b < proto.inputs_size(); ++b)
    inputOfTensor[proto.inputs(b).tensor()] = b;
  for (const plan::Binding &b : proto.outputs()) {
    outputBinding.emplace(b.tensor(), b.name());
    outputNames.insert(b.name());
  }
  std::vector<Probe> probes;
  std::vector<Statistics> stats;
  std::map<std::string, size_t> statOfName;
  for (int t = 0; t < numTensors; ++t) {
    if (!selected[t])
      continue;
    plan::TensorInfo &info = *proto.mutable_tensors(t);
    Probe probe{"", -1, 0};
    if (info.kind() == plan::TensorInfo::INPUT) {
      probe.input = inputOfTensor.at(t);
    } else if (outputBinding.count(t)) {
      probe.binding = outputBinding[t];
    } else {
      info.set_kind(plan::TensorInfo::OUTPUT);
      probe.binding = "calibrate/" + std::to_string(t);
      while (!outputNames.insert(probe.binding).second)
        probe.binding += "_";
      plan::Binding *b = proto.add_outputs();
      b->set_name(probe.binding);
      b->set_tensor(t);
    }
    // Tensors that share a name share their statistics: the JSON has one
    // entry per name, which is all a pass matching names can use.
    auto [it, added] = statOfName.emplace(info.name(), stats.size());
    if (added)
      stats.push_back({info.name(), INFINITY, -INFINITY, std::nullopt});
    probe.stat = it->second;
    probes.push_back(std::move(probe));
  }
  GOPT_ASSIGN_OR_RETURN(Plan plan,
                        Plan::fromProto(std::move(proto), loaded.origin()));

  SessionOptions so;
  so.backend = o.backend;
  so.batchSize = o.batch;
  so.threads = o.threads;
  so.memoryLimitBytes = o.memoryLimit;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::create(plan, so));
  std::vector<TensorDesc> inputDescs = session->inputs();
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<CalibrationBatches> source,
                        makeBatches(inputDescs));
  const int64_t batches = source->count();
  const bool histograms = o.method != CalibrationMethod::kMinMax;

  Progress progress;
  std::vector<float> buffer;
  auto runPass = [&](bool histogramPass) -> Status {
    const char *label = !histograms     ? "min/max"
                        : histogramPass ? "pass 2/2 (histograms)"
                                        : "pass 1/2 (min/max)";
    for (int64_t k = 0; k < batches; ++k) {
      progress.update(label, k, batches);
      GOPT_ASSIGN_OR_RETURN(std::vector<Tensor> values, source->batch(k));
      for (size_t i = 0; i < inputDescs.size(); ++i)
        GOPT_RETURN_IF_ERROR(session->setInput(inputDescs[i].name, values[i]));
      GOPT_RETURN_IF_ERROR(session->run());
      for (const Probe &probe : probes) {
        Tensor value;
        if (probe.input >= 0) {
          value = values[probe.input];
        } else {
          GOPT_ASSIGN_OR_RETURN(value, session->output(probe.binding));
        }
        const float *x = asFloats(value, buffer);
        const int64_t n = value.numElements();
        Statistics &s = stats[probe.stat];
        if (histogramPass) {
          s.histogram->add(x, n);
          continue;
        }
        for (int64_t i = 0; i < n; ++i) {
          if (!std::isfinite(x[i]))
            return invalidArgument(
                "tensor '", s.name, "' has ",
                std::isnan(x[i]) ? "a NaN" : "an infinite", " value in batch ",
                k + 1, " of ", batches,
                "; calibration needs finite activations (no file written)");
          s.min = std::min(s.min, x[i]);
          s.max = std::max(s.max, x[i]);
        }
      }
    }
    progress.update(label, batches, batches);
    return Status::success();
  };

  GOPT_RETURN_IF_ERROR(runPass(false));
  // A tensor with no elements in any batch has no range: zeros.
  for (Statistics &s : stats)
    if (!std::isfinite(s.min))
      s.min = s.max = 0;
  if (histograms) {
    for (Statistics &s : stats)
      s.histogram.emplace(std::max(std::fabs(s.min), std::fabs(s.max)));
    GOPT_RETURN_IF_ERROR(runPass(true));
  }

  CalibrationResult result;
  result.method = o.method;
  result.percentile = o.percentile;
  result.model = baseName(modelName);
  result.batches = batches;
  for (const Statistics &s : stats) {
    TensorRange r;
    r.name = s.name;
    r.min = s.min;
    r.max = s.max;
    switch (o.method) {
    case CalibrationMethod::kMinMax:
      r.threshold = std::max(std::fabs(r.min), std::fabs(r.max));
      break;
    case CalibrationMethod::kPercentile:
      r.threshold = percentileThreshold(*s.histogram, o.percentile);
      break;
    case CalibrationMethod::kEntropy:
      r.threshold = entropyThreshold(*s.histogram);
      break;
    }
    result.tensors.push_back(std::move(r));
  }
  return result;
}

StatusOr<bool> runCalibration(const CalibrateOptions &o) {
  // Fail before the runs, not after them.
  size_t slash = o.out.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : o.out.substr(0, slash);
  if (access(dir.empty() ? "/" : dir.c_str(), W_OK) != 0)
    return notFound("--calibration-out ", o.out, ": cannot write to '", dir,
                    "': ", std::strerror(errno));
  ModelLoadOptions load;
  load.backend = o.backend;
  load.batchSize = o.batch;
  load.pipeline = o.pipeline;
  GOPT_ASSIGN_OR_RETURN(Plan loaded, loadModelAsPlan(o.model, load));
  GOPT_ASSIGN_OR_RETURN(
      CalibrationResult result,
      calibratePlan(
          loaded, o,
          [&](const std::vector<TensorDesc> &inputs)
              -> StatusOr<std::unique_ptr<CalibrationBatches>> {
            GOPT_ASSIGN_OR_RETURN(std::unique_ptr<BatchSource> source,
                                  BatchSource::create(o, inputs));
            return std::unique_ptr<CalibrationBatches>(std::move(source));
          },
          o.model));
  const int64_t batches = result.batches;
  GOPT_RETURN_IF_ERROR(writeFileAtomically(o.out, calibrationToJson(result)));
  std::string method = calibrationMethodName(o.method);
  if (o.method == CalibrationMethod::kPercentile) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), " %g", o.percentile);
    method += buf;
  }
  std::printf("calibrated %zu tensors over %lld batch%s of %lld (method %s): "
              "%s\n",
              result.tensors.size(), static_cast<long long>(batches),
              batches == 1 ? "" : "es", static_cast<long long>(o.batch),
              method.c_str(), o.out.c_str());
  return true;
}

} // namespace gopt::tooling
