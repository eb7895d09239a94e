//===- module.cpp - gopt._gopt: the C++ side of the Python API ------------===//
//
// A thin layer over the libraries: gopt::Model (the compiler, when built),
// runtime::Plan and runtime::Session, the tooling's profile, trace and
// calibration. Every runtime::Status error becomes a gopt.Error subclass
// (python/gopt/errors.py) with the message gopt-run prints; nothing here
// aborts the interpreter. Conventions the pure-Python layer relies on are
// documented there (python/gopt/__init__.py).
//
//===----------------------------------------------------------------------===//

#include "gopt/Tooling/Calibrate.h"
#include "gopt/Tooling/Profile.h"
#include "gopt/Tooling/Report.h"
#include "gopt/Tooling/Trainer.h"
#include "gopt/runtime/DataPipeline.h"
#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Session.h"

#ifdef GOPT_HAVE_COMPILER
#include "gopt/Driver/Model.h"
#endif

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace py = pybind11;
using namespace gopt::runtime;

namespace {

/// A failed Status on its way to Python: the translator below raises the
/// gopt.errors class of its code.
struct StatusError {
  StatusCode code;
  std::string message;
};

void check(const Status &status) {
  if (!status.ok())
    throw StatusError{status.code(), status.message()};
}

template <typename T> T check(StatusOr<T> value) {
  check(value.status());
  return std::move(value).value();
}

const char *errorClassName(StatusCode code) {
  switch (code) {
  case StatusCode::kInvalidArgument:
    return "InvalidArgument";
  case StatusCode::kNotFound:
    return "NotFound";
  case StatusCode::kFailedPrecondition:
    return "FailedPrecondition";
  case StatusCode::kUnimplemented:
    return "Unimplemented";
  case StatusCode::kDataLoss:
    return "DataLoss";
  case StatusCode::kResourceExhausted:
    return "ResourceExhausted";
  case StatusCode::kInternal:
  case StatusCode::kOk:
    break;
  }
  return "InternalError";
}

[[noreturn]] void raise(StatusCode code, const std::string &message) {
  throw StatusError{code, message};
}

// --- dtypes -----------------------------------------------------------------

/// The numpy dtype of a runtime dtype; bf16 has none (numpy lacks it).
std::optional<py::dtype> numpyDType(DType dtype) {
  switch (dtype) {
  case DType::kF32:
    return py::dtype::of<float>();
  case DType::kF16:
    return py::dtype("float16");
  case DType::kF64:
    return py::dtype::of<double>();
  case DType::kI8:
    return py::dtype::of<int8_t>();
  case DType::kI16:
    return py::dtype::of<int16_t>();
  case DType::kI32:
    return py::dtype::of<int32_t>();
  case DType::kI64:
    return py::dtype::of<int64_t>();
  case DType::kU8:
    return py::dtype::of<uint8_t>();
  case DType::kU16:
    return py::dtype::of<uint16_t>();
  case DType::kU32:
    return py::dtype::of<uint32_t>();
  case DType::kU64:
    return py::dtype::of<uint64_t>();
  case DType::kBool:
    return py::dtype::of<bool>();
  default:
    return std::nullopt;
  }
}

/// "float32"; "bfloat16" for bf16, which numpy cannot hold.
std::string numpyName(DType dtype) {
  if (dtype == DType::kBF16)
    return "bfloat16";
  std::optional<py::dtype> d = numpyDType(dtype);
  return d ? py::str(*d).cast<std::string>() : dtypeName(dtype);
}

/// The runtime dtype of a numpy dtype in native byte order, by its type
/// number (run() checks every feed, so no string parsing here).
std::optional<DType> runtimeDType(const py::dtype &dtype) {
  const auto *descr = py::detail::array_descriptor_proxy(dtype.ptr());
  bool native =
      descr->byteorder == '=' || descr->byteorder == '|' ||
      (descr->byteorder == '<') == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
  if (!native || descr->kind == 'V')
    return std::nullopt;
  // numpy's (kind, item size) of each runtime type numpy can hold.
  static const struct {
    char kind;
    int size;
    DType dtype;
  } kTypes[] = {
      {'b', 1, DType::kBool}, {'f', 2, DType::kF16}, {'f', 4, DType::kF32},
      {'f', 8, DType::kF64},  {'i', 1, DType::kI8},  {'i', 2, DType::kI16},
      {'i', 4, DType::kI32},  {'i', 8, DType::kI64}, {'u', 1, DType::kU8},
      {'u', 2, DType::kU16},  {'u', 4, DType::kU32}, {'u', 8, DType::kU64}};
  for (const auto &t : kTypes)
    if (t.kind == descr->kind && t.size == descr->elsize)
      return t.dtype;
  return std::nullopt;
}

/// A shape with dynamic dimensions as None.
py::list shapeToPython(const Shape &shape) {
  py::list out;
  for (int64_t d : shape)
    out.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
  return out;
}

py::dict describe(const std::string &name, DType dtype, const Shape &shape) {
  py::dict d;
  d["name"] = name;
  d["dtype"] = numpyName(dtype);
  d["shape"] = shapeToPython(shape);
  return d;
}

/// A view of `t` as a numpy array that keeps `owner` (an owning copy) alive.
py::array toNumpy(const char *kind, const std::string &name, Tensor t) {
  if (t.dtype() == DType::kBF16) {
    // numpy has no bfloat16: widen to float32, exactly.
    Tensor wide = Tensor::allocate(DType::kF32, t.shape());
    const uint16_t *src = t.data<uint16_t>();
    float *dst = wide.data<float>();
    for (int64_t i = 0; i < t.numElements(); ++i)
      dst[i] = bf16ToFloat(src[i]);
    t = wide;
  }
  std::optional<py::dtype> dtype = numpyDType(t.dtype());
  if (!dtype)
    raise(StatusCode::kUnimplemented,
          std::string(kind) + " '" + name + "': element type " +
              dtypeName(t.dtype()) + " has no numpy equivalent");
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  auto *keep = new Tensor(std::move(t));
  py::capsule owner(keep, [](void *p) { delete static_cast<Tensor *>(p); });
  return py::array(*dtype, shape, keep->data(), owner);
}

// --- sessions
// -----------------------------------------------------------------

/// A session and the lock that serializes its runs: run() releases the GIL,
/// so two Python threads may call it at once.
class PySession {
public:
  PySession(const Plan &plan, const SessionOptions &options)
      : session_(check(Session::create(plan, options))), plan_(plan) {}

  py::list describeBindings(bool inputs) const {
    py::list out;
    const auto &proto = plan_.proto();
    const auto &bindings = inputs ? proto.inputs() : proto.outputs();
    for (const auto &b : bindings) {
      const auto &info = proto.tensors(b.tensor());
      Shape shape(info.shape().begin(), info.shape().end());
      out.append(describe(b.name(), fromProtoDType(info.dtype()), shape));
    }
    return out;
  }

  /// Binds `feeds` (checked here, by name), runs once, and returns the
  /// outputs `names` (all when empty) as arrays of their own.
  py::list run(const std::vector<std::string> &names, const py::dict &feeds) {
    const auto &proto = plan_.proto();
    std::vector<std::pair<std::string, Tensor>> bound;
    std::vector<py::array> keepAlive;
    for (auto item : feeds) {
      std::string name = py::str(item.first);
      int tensor = plan_.inputTensor(name);
      if (tensor < 0)
        raise(StatusCode::kNotFound,
              "feed '" + name + "': the model has no input named '" + name +
                  "' (inputs: " + inputList() + ")");
      const auto &info = proto.tensors(tensor);
      DType want = fromProtoDType(info.dtype());
      Shape planShape(info.shape().begin(), info.shape().end());
      if (!py::isinstance<py::array>(item.second))
        raise(StatusCode::kInvalidArgument,
              "feed '" + name + "': expected a numpy array, got " +
                  std::string(
                      py::str(py::type::of(item.second).attr("__name__"))));
      py::array array = py::reinterpret_borrow<py::array>(item.second);
      std::optional<DType> got = runtimeDType(array.dtype());
      if (!got || *got != want)
        raise(StatusCode::kInvalidArgument,
              "feed '" + name + "': expected dtype " + numpyName(want) +
                  ", got " + std::string(py::str(array.dtype())));
      if (array.ndim() != static_cast<py::ssize_t>(planShape.size()))
        raise(StatusCode::kInvalidArgument,
              "feed '" + name + "': expected rank " +
                  std::to_string(planShape.size()) + " (shape " +
                  shapeToString(planShape) + "), got rank " +
                  std::to_string(array.ndim()) + " (shape " +
                  shapeToString(arrayShape(array)) + ")");
      Shape shape = arrayShape(array);
      for (size_t i = 0; i < shape.size(); ++i)
        if (planShape[i] >= 0 && shape[i] != planShape[i])
          raise(StatusCode::kInvalidArgument,
                "feed '" + name + "': dimension " + std::to_string(i) + " is " +
                    std::to_string(shape[i]) + ", the model expects " +
                    std::to_string(planShape[i]) + " (shape " +
                    shapeToString(planShape) + ", got " + shapeToString(shape) +
                    ")");
      // The session reads the array's memory in place; a strided or
      // unaligned array is copied to a dense one first.
      if (!(array.flags() & py::array::c_style) ||
          !(array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
        array = py::array(
            py::module_::import("numpy").attr("ascontiguousarray")(array));
      keepAlive.push_back(array);
      bound.emplace_back(
          name, Tensor::view(want, shape, const_cast<void *>(array.data())));
    }
    for (const auto &b : proto.inputs()) {
      bool given = false;
      for (const auto &[name, t] : bound)
        given |= name == b.name();
      if (!given)
        raise(StatusCode::kInvalidArgument,
              "missing feed for input '" + b.name() +
                  "' (inputs: " + inputList() + ")");
    }
    std::vector<std::string> wanted = names;
    if (wanted.empty())
      for (const auto &b : proto.outputs())
        wanted.push_back(b.name());
    for (const std::string &name : wanted)
      if (plan_.outputTensor(name) < 0)
        raise(StatusCode::kNotFound,
              "output '" + name + "': the model has no output named '" + name +
                  "' (outputs: " + outputList() + ")");

    std::vector<Tensor> results;
    Status status;
    double ms = 0;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = runLocked(bound, wanted, results, ms);
    }
    check(status);
    lastStepMs_ = ms;
    py::list out;
    for (size_t i = 0; i < wanted.size(); ++i)
      out.append(toNumpy("output", wanted[i], std::move(results[i])));
    return out;
  }

  py::list profile() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<OpProfile> rows = gopt::tooling::sortedProfiles(*session_);
    double total = gopt::tooling::sumOpMs(rows);
    py::list out;
    for (const OpProfile &p : rows) {
      py::dict row;
      row["name"] = p.name;
      row["kind"] = p.kind;
      row["device"] = p.device;
      row["implementation"] = p.implementation;
      row["calls"] = p.calls;
      row["total_ms"] = p.totalMs;
      row["mean_ms"] = p.calls ? p.totalMs / p.calls : 0.0;
      row["min_run_ms"] = p.minRunMs;
      row["share"] = total > 0 ? p.totalMs / total : 0.0;
      row["flops"] = p.flops;
      out.append(row);
    }
    return out;
  }

  void resetProfiles() {
    std::lock_guard<std::mutex> lock(mutex_);
    session_->resetProfiles();
  }

  void writeTrace(const std::string &path) const {
    std::lock_guard<std::mutex> lock(mutex_);
    check(gopt::tooling::writeTrace(path, *session_, lastStepMs_));
  }

  py::dict memory() const {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats m = session_->memoryStats();
    py::dict d;
    d["arena_bytes"] = m.arenaBytes;
    d["intermediate_bytes"] = m.intermediateBytes;
    d["constant_bytes"] = m.constantBytes;
    d["input_bytes"] = m.inputBytes;
    d["output_bytes"] = m.outputBytes;
    d["state_bytes"] = m.stateBytes;
    d["workspace_bytes"] = m.workspaceBytes;
    d["total_bytes"] = m.totalBytes();
    return d;
  }

  double lastStepMs() const { return lastStepMs_; }

private:
  static Shape arrayShape(const py::array &array) {
    return Shape(array.shape(), array.shape() + array.ndim());
  }

  std::string bindingList(bool inputs) const {
    std::string list;
    const auto &bindings =
        inputs ? plan_.proto().inputs() : plan_.proto().outputs();
    for (const auto &b : bindings)
      list += (list.empty() ? "'" : ", '") + b.name() + "'";
    return list;
  }
  std::string inputList() const { return bindingList(true); }
  std::string outputList() const { return bindingList(false); }

  Status runLocked(const std::vector<std::pair<std::string, Tensor>> &bound,
                   const std::vector<std::string> &wanted,
                   std::vector<Tensor> &results, double &ms) {
    for (const auto &[name, t] : bound)
      GOPT_RETURN_IF_ERROR(session_->bindInput(name, t));
    auto start = std::chrono::steady_clock::now();
    GOPT_RETURN_IF_ERROR(session_->run());
    ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
             .count();
    for (const std::string &name : wanted) {
      GOPT_ASSIGN_OR_RETURN(Tensor view, session_->output(name));
      // The view is the session's buffer, rewritten by the next run.
      results.push_back(view.clone());
    }
    return Status::success();
  }

  std::unique_ptr<Session> session_;
  Plan plan_;
  mutable std::mutex mutex_;
  double lastStepMs_ = 0;
};

py::list describePlan(const Plan &plan, bool inputs) {
  py::list out;
  const auto &proto = plan.proto();
  for (const auto &b : inputs ? proto.inputs() : proto.outputs()) {
    const auto &info = proto.tensors(b.tensor());
    out.append(describe(b.name(), fromProtoDType(info.dtype()),
                        Shape(info.shape().begin(), info.shape().end())));
  }
  return out;
}

/// Runs `plan` over `batches` (a list of {input name: ndarray}) and returns
/// the ranges: the method, the tensors' min/max/threshold, and the JSON
/// document gopt-run --calibrate writes (what gopt-quantize reads).
py::dict calibrate(const Plan &plan, const py::list &batches,
                   const std::string &method, double percentile,
                   const std::string &backend, int threads) {
  gopt::tooling::CalibrateOptions o;
  std::optional<gopt::tooling::CalibrationMethod> parsed =
      gopt::tooling::parseCalibrationMethod(method);
  if (!parsed)
    raise(StatusCode::kInvalidArgument,
          "unknown calibration method '" + method +
              "' (expected minmax, percentile or entropy)");
  o.method = *parsed;
  o.percentile = percentile;
  o.backend = backend;
  o.threads = threads;
  std::vector<std::map<std::string, Tensor>> tensors;
  std::vector<py::array> keepAlive;
  for (py::handle batch : batches) {
    if (!py::isinstance<py::dict>(batch))
      raise(StatusCode::kInvalidArgument,
            "a calibration batch must be a dict of input name to array");
    std::map<std::string, Tensor> values;
    for (auto item : py::reinterpret_borrow<py::dict>(batch)) {
      std::string name = py::str(item.first);
      py::array array = py::array(
          py::module_::import("numpy").attr("ascontiguousarray")(item.second));
      std::optional<DType> dtype = runtimeDType(array.dtype());
      if (!dtype)
        raise(StatusCode::kInvalidArgument,
              "calibration input '" + name + "': unsupported dtype " +
                  std::string(py::str(array.dtype())));
      keepAlive.push_back(array);
      values[name] = Tensor::view(
          *dtype, Shape(array.shape(), array.shape() + array.ndim()),
          const_cast<void *>(array.data()));
    }
    tensors.push_back(std::move(values));
  }
  StatusOr<gopt::tooling::CalibrationResult> result =
      internalError("calibration did not run");
  {
    py::gil_scoped_release release;
    result = gopt::tooling::calibratePlan(
        plan, o,
        gopt::tooling::calibrationBatchesFromTensors(std::move(tensors)),
        plan.origin());
  }
  check(result.status());
  py::dict out;
  out["method"] = gopt::tooling::calibrationMethodName(result->method);
  out["percentile"] = result->percentile;
  out["batches"] = result->batches;
  py::dict ranges;
  for (const auto &t : result->tensors)
    ranges[py::str(t.name)] = py::make_tuple(t.min, t.max, t.threshold);
  out["tensors"] = ranges;
  out["json"] = gopt::tooling::calibrationToJson(*result);
  return out;
}

// --- training
// -----------------------------------------------------------------

/// `array` as a tensor view of dtype `want`, after the checks that name the
/// argument: dtype, rank, and the dimensions after the first.
Tensor viewOf(const std::string &what, py::array &array,
              const std::vector<DType> &allowed, const Shape *rowShape) {
  std::optional<DType> dtype = runtimeDType(array.dtype());
  bool ok = dtype &&
            std::find(allowed.begin(), allowed.end(), *dtype) != allowed.end();
  if (!ok) {
    std::string names;
    for (DType d : allowed)
      names += (names.empty() ? "" : " or ") + numpyName(d);
    raise(StatusCode::kInvalidArgument,
          what + ": expected dtype " + names + ", got " +
              std::string(py::str(array.dtype())));
  }
  Shape shape(array.shape(), array.shape() + array.ndim());
  if (rowShape) {
    Shape rows(shape.empty() ? shape.begin() : shape.begin() + 1, shape.end());
    if (shape.empty() || rows != *rowShape)
      raise(StatusCode::kInvalidArgument,
            what + ": expected shape [B," + shapeToString(*rowShape).substr(1) +
                ", got " + shapeToString(shape));
  } else if (shape.size() != 1) {
    raise(StatusCode::kInvalidArgument,
          what + ": expected shape [B], got " + shapeToString(shape));
  }
  if (!(array.flags() & py::array::c_style) ||
      !(array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    array = py::array(
        py::module_::import("numpy").attr("ascontiguousarray")(array));
  return Tensor::view(*dtype, shape, const_cast<void *>(array.data()));
}

py::dict evalToPython(const gopt::tooling::EvalResult &r) {
  py::dict d;
  d["accuracy"] = r.accuracy();
  d["loss"] = r.meanLoss();
  d["correct"] = r.correct;
  d["total"] = r.total;
  return d;
}

/// gopt::tooling::Trainer with its runs serialized and the GIL released.
class PyTrainer {
public:
  explicit PyTrainer(const gopt::tooling::TrainOptions &options) {
    StatusOr<std::unique_ptr<gopt::tooling::Trainer>> t =
        internalError("not created");
    {
      py::gil_scoped_release release;
      t = gopt::tooling::Trainer::create(options);
    }
    trainer_ = check(std::move(t));
  }

  float step(py::array inputs, py::array labels) {
    Shape example = trainer_->exampleShape();
    Tensor x = viewOf("inputs", inputs, {DType::kF32}, &example);
    Tensor y = viewOf("labels", labels, {DType::kI64, DType::kI32}, nullptr);
    if (x.dim(0) != y.dim(0))
      raise(StatusCode::kInvalidArgument,
            "inputs have " + std::to_string(x.dim(0)) + " rows, labels " +
                std::to_string(y.dim(0)));
    StatusOr<float> loss = internalError("not run");
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      loss = trainer_->step(x, y);
    }
    return check(std::move(loss));
  }

  py::dict evaluate(py::array inputs, py::array labels, int64_t batch) {
    Shape example = trainer_->exampleShape();
    Tensor x = viewOf("inputs", inputs, {DType::kF32}, &example);
    Tensor y = viewOf("labels", labels, {DType::kI64, DType::kI32}, nullptr);
    if (x.dim(0) != y.dim(0))
      raise(StatusCode::kInvalidArgument,
            "inputs have " + std::to_string(x.dim(0)) + " rows, labels " +
                std::to_string(y.dim(0)));
    if (batch < 1)
      raise(StatusCode::kInvalidArgument, "batch must be at least 1");
    gopt::tooling::EvalResult result;
    Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      // In slices of `batch` rows, as Trainer::evaluate walks a dataset.
      size_t xRow = x.byteSize() / std::max<int64_t>(1, x.dim(0));
      size_t yRow = dtypeSize(y.dtype());
      for (int64_t start = 0; start < x.dim(0) && status.ok(); start += batch) {
        int64_t rows = std::min(batch, x.dim(0) - start);
        Shape xs = x.shape(), ys = y.shape();
        xs[0] = ys[0] = rows;
        status = trainer_->evaluateBatch(
            Tensor::view(x.dtype(), xs, x.data<char>() + start * xRow),
            Tensor::view(y.dtype(), ys, y.data<char>() + start * yRow), result);
      }
    }
    check(status);
    return evalToPython(result);
  }

  py::dict evaluateData(const std::string &spec) {
    const auto &o = trainer_->options();
    std::shared_ptr<Dataset> data = check(gopt::tooling::openTrainingData(
        spec, trainer_->exampleShape(), trainer_->numClasses(), o));
    StatusOr<gopt::tooling::EvalResult> r = internalError("not run");
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      r = trainer_->evaluate(data);
    }
    return evalToPython(check(std::move(r)));
  }

  py::dict parameters() {
    std::lock_guard<std::mutex> lock(mutex_);
    py::dict out;
    for (const std::string &name : trainer_->parameterNames())
      out[py::str(name)] =
          toNumpy("parameter", name, check(trainer_->parameter(name)).clone());
    return out;
  }

  void setParameter(const std::string &name, py::array value) {
    std::lock_guard<std::mutex> lock(mutex_);
    Tensor current = check(trainer_->parameter(name));
    std::string what = "parameter '" + name + "'";
    Shape shape(value.shape(), value.shape() + value.ndim());
    if (shape != current.shape())
      raise(StatusCode::kInvalidArgument, what + ": expected shape " +
                                              shapeToString(current.shape()) +
                                              ", got " + shapeToString(shape));
    std::optional<DType> dtype = runtimeDType(value.dtype());
    if (!dtype || *dtype != current.dtype())
      raise(StatusCode::kInvalidArgument,
            what + ": expected dtype " + numpyName(current.dtype()) + ", got " +
                std::string(py::str(value.dtype())));
    py::array dense = py::array(
        py::module_::import("numpy").attr("ascontiguousarray")(value));
    check(trainer_->setParameter(
        name, Tensor::view(*dtype, shape, const_cast<void *>(dense.data()))));
  }

  void save(const std::string &dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    check(trainer_->saveParameters(dir));
  }
  void load(const std::string &dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    check(trainer_->loadParameters(dir));
  }

  py::dict info() const {
    py::dict d;
    d["data_input"] = trainer_->dataInput().name;
    d["example_shape"] = trainer_->exampleShape();
    d["num_classes"] = trainer_->numClasses();
    d["compile_seconds"] = trainer_->compileSeconds();
    d["state_count"] = trainer_->stateCount();
    d["dynamic_loss_scaling"] = trainer_->dynamicLossScaling();
    d["loss_scale"] = trainer_->lossScale();
    d["skipped_steps"] = trainer_->skippedSteps();
    return d;
  }

  py::list profile() {
    std::lock_guard<std::mutex> lock(mutex_);
    py::list out;
    for (const OpProfile &p :
         gopt::tooling::sortedProfiles(trainer_->session())) {
      py::dict row;
      row["name"] = p.name;
      row["kind"] = p.kind;
      row["device"] = p.device;
      row["implementation"] = p.implementation;
      row["calls"] = p.calls;
      row["total_ms"] = p.totalMs;
      row["mean_ms"] = p.calls ? p.totalMs / p.calls : 0.0;
      row["min_run_ms"] = p.minRunMs;
      out.append(row);
    }
    return out;
  }

private:
  std::unique_ptr<gopt::tooling::Trainer> trainer_;
  std::mutex mutex_;
};

/// The input pipeline as a Python iterator: BatchLoader's batches, its
/// queue statistics, and the data-bound / compute-bound verdict, counting
/// the time the consumer spent between next() calls as compute.
class PyLoader {
public:
  PyLoader(const std::string &spec, const Shape &exampleShape,
           int64_t numClasses, const gopt::tooling::TrainOptions &o,
           const LoaderOptions &lo) {
    data_ = check(
        gopt::tooling::openTrainingData(spec, exampleShape, numClasses, o));
    loader_ = check(BatchLoader::create(data_, lo));
  }

  py::tuple next() {
    auto now = std::chrono::steady_clock::now();
    if (started_)
      computeSeconds_ +=
          std::chrono::duration<double>(now - lastReturn_).count();
    StatusOr<std::optional<Batch>> batch = internalError("not run");
    {
      py::gil_scoped_release release;
      batch = loader_->next();
    }
    std::optional<Batch> b = check(std::move(batch));
    started_ = false;
    if (!b)
      throw py::stop_iteration();
    started_ = true;
    lastReturn_ = std::chrono::steady_clock::now();
    return py::make_tuple(toNumpy("batch", "inputs", b->inputs),
                          toNumpy("batch", "labels", b->labels));
  }

  py::dict stats() const {
    LoaderStats s = loader_->stats();
    py::dict d;
    d["batches"] = s.batches;
    d["samples"] = s.samples;
    d["capacity"] = s.capacity;
    d["mean_fill"] = s.meanFill;
    d["fraction_empty"] = s.fractionEmpty;
    d["wait_seconds"] = s.totalWaitSeconds;
    d["fill_histogram"] = s.fillHistogram;
    d["compute_seconds"] = computeSeconds_;
    return d;
  }

  std::string verdict(std::optional<double> computeSeconds) const {
    return classifyBottleneck(loader_->stats(),
                              computeSeconds.value_or(computeSeconds_));
  }

  int64_t batchesPerEpoch() const { return loader_->batchesPerEpoch(); }
  int64_t totalBatches() const { return loader_->totalBatches(); }
  std::string describe() const { return data_->describe(); }
  Shape exampleShape() const { return data_->inputShape(); }
  int64_t size() const { return data_->size(); }

private:
  std::shared_ptr<Dataset> data_;
  std::unique_ptr<BatchLoader> loader_;
  bool started_ = false;
  std::chrono::steady_clock::time_point lastReturn_;
  double computeSeconds_ = 0;
};

gopt::tooling::TrainOptions trainOptionsFrom(const py::dict &d) {
  gopt::tooling::TrainOptions o;
  for (auto item : d) {
    std::string key = py::str(item.first);
    py::handle v = item.second;
    if (key == "model")
      o.model = v.cast<std::string>();
    else if (key == "backend")
      o.backend = v.cast<std::string>();
    else if (key == "threads")
      o.threads = v.cast<int>();
    else if (key == "memory_limit")
      o.memoryLimit = v.cast<size_t>();
    else if (key == "loss")
      o.loss = v.cast<std::string>();
    else if (key == "optimizer")
      o.optimizer = v.cast<std::string>();
    else if (key == "lr")
      o.lr = v.cast<double>();
    else if (key == "momentum")
      o.momentum = v.cast<double>();
    else if (key == "weight_decay")
      o.weightDecay = v.cast<double>();
    else if (key == "precision")
      o.precision = v.cast<std::string>();
    else if (key == "loss_scale")
      o.lossScale = v.cast<std::string>();
    else if (key == "batch")
      o.batch = v.cast<int64_t>();
    else if (key == "seed")
      o.seed = v.cast<uint64_t>();
    else if (key == "normalize_mean")
      o.normalizeMean = v.cast<float>();
    else if (key == "normalize_std")
      o.normalizeStd = v.cast<float>();
    else if (key == "image_feature")
      o.imageFeature = v.cast<std::string>();
    else if (key == "label_feature")
      o.labelFeature = v.cast<std::string>();
    else
      raise(StatusCode::kInvalidArgument,
            "unknown training option '" + key + "'");
  }
  return o;
}

#ifdef GOPT_HAVE_COMPILER
using PyGraph = gopt::Model;
#endif

} // namespace

PYBIND11_MODULE(_gopt, m) {
  m.doc() = "gopt's C++ core; use the gopt package, not this module.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const StatusError &e) {
      py::object cls =
          py::module_::import("gopt.errors").attr(errorClassName(e.code));
      PyErr_SetString(cls.ptr(), e.message.c_str());
    }
  });

#ifdef GOPT_HAVE_COMPILER
  m.attr("HAVE_COMPILER") = true;
#else
  m.attr("HAVE_COMPILER") = false;
#endif

  py::class_<Plan>(m, "Plan")
      .def_static(
          "load_file",
          [](const std::string &path) {
            return check(Plan::loadFromFile(path));
          },
          py::arg("path"))
      .def_static(
          "load_bytes",
          [](py::bytes bytes, const std::string &origin) {
            return check(Plan::loadFromBytes(std::string(bytes), origin));
          },
          py::arg("bytes"), py::arg("origin") = "<bytes>")
      .def("save", [](const Plan &p,
                      const std::string &path) { check(p.saveToFile(path)); })
      .def("serialize", [](const Plan &p) { return py::bytes(p.serialize()); })
      .def_property_readonly("origin", &Plan::origin)
      .def("inputs", [](const Plan &p) { return describePlan(p, true); })
      .def("outputs", [](const Plan &p) { return describePlan(p, false); })
      .def("op_count", [](const Plan &p) { return p.proto().ops_size(); })
      .def("op_kinds", [](const Plan &p) {
        std::map<std::string, int> kinds;
        for (const auto &op : p.proto().ops())
          ++kinds[op.kind()];
        return kinds;
      });

  py::class_<PySession>(m, "Session")
      .def(py::init([](const Plan &plan, const std::string &backend,
                       int threads, int64_t batch, size_t memoryLimit) {
             SessionOptions o;
             o.backend = backend;
             o.threads = threads;
             o.batchSize = batch;
             o.memoryLimitBytes = memoryLimit;
             return std::make_unique<PySession>(plan, o);
           }),
           py::arg("plan"), py::arg("backend") = "cpu", py::arg("threads") = 0,
           py::arg("batch") = 1, py::arg("memory_limit") = 0)
      .def("inputs",
           [](const PySession &s) { return s.describeBindings(true); })
      .def("outputs",
           [](const PySession &s) { return s.describeBindings(false); })
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feeds"))
      .def("profile", &PySession::profile)
      .def("reset_profiles", &PySession::resetProfiles)
      .def("write_trace", &PySession::writeTrace, py::arg("path"))
      .def("memory", &PySession::memory)
      .def_property_readonly("last_step_ms", &PySession::lastStepMs);

  m.def("calibrate", &calibrate, py::arg("plan"), py::arg("batches"),
        py::arg("method") = "minmax", py::arg("percentile") = 99.99,
        py::arg("backend") = "cpu", py::arg("threads") = 0);

  py::class_<PyTrainer>(m, "Trainer")
      .def(py::init([](const py::dict &options) {
             return std::make_unique<PyTrainer>(trainOptionsFrom(options));
           }),
           py::arg("options"))
      .def("step", &PyTrainer::step, py::arg("inputs"), py::arg("labels"))
      .def("evaluate", &PyTrainer::evaluate, py::arg("inputs"),
           py::arg("labels"), py::arg("batch") = 500)
      .def("evaluate_data", &PyTrainer::evaluateData, py::arg("spec"))
      .def("parameters", &PyTrainer::parameters)
      .def("set_parameter", &PyTrainer::setParameter, py::arg("name"),
           py::arg("value"))
      .def("save", &PyTrainer::save, py::arg("dir"))
      .def("load", &PyTrainer::load, py::arg("dir"))
      .def("info", &PyTrainer::info)
      .def("profile", &PyTrainer::profile);

  py::class_<PyLoader>(m, "Loader")
      .def(py::init([](const std::string &spec, const Shape &exampleShape,
                       int64_t numClasses, const py::dict &options,
                       int64_t batch, bool shuffle, uint64_t seed, int prefetch,
                       int threads, int64_t epochs, bool dropLast) {
             gopt::tooling::TrainOptions o = trainOptionsFrom(options);
             LoaderOptions lo;
             lo.batchSize = batch;
             lo.shuffle = shuffle;
             lo.seed = seed;
             lo.prefetch = prefetch;
             lo.threads = threads;
             lo.numEpochs = epochs;
             lo.dropLast = dropLast;
             return std::make_unique<PyLoader>(spec, exampleShape, numClasses,
                                               o, lo);
           }),
           py::arg("spec"), py::arg("example_shape"), py::arg("num_classes"),
           py::arg("options"), py::arg("batch"), py::arg("shuffle"),
           py::arg("seed"), py::arg("prefetch"), py::arg("threads"),
           py::arg("epochs"), py::arg("drop_last"))
      .def("next", &PyLoader::next)
      .def("stats", &PyLoader::stats)
      .def("verdict", &PyLoader::verdict,
           py::arg("compute_seconds") = py::none())
      .def("batches_per_epoch", &PyLoader::batchesPerEpoch)
      .def("total_batches", &PyLoader::totalBatches)
      .def("describe", &PyLoader::describe)
      .def("example_shape", &PyLoader::exampleShape)
      .def("size", &PyLoader::size);

#ifdef GOPT_HAVE_COMPILER
  py::class_<PyGraph>(m, "Graph")
      .def_static(
          "load_file",
          [](const std::string &path, const std::string &format) {
            py::gil_scoped_release release;
            return check(gopt::Model::fromFile(path, format));
          },
          py::arg("path"), py::arg("format") = "")
      .def_static(
          "load_bytes",
          [](py::bytes bytes, const std::string &format,
             const std::string &name) {
            std::string data(bytes);
            py::gil_scoped_release release;
            return check(gopt::Model::fromBytes(data, format, name));
          },
          py::arg("bytes"), py::arg("format") = "", py::arg("name") = "<bytes>")
      .def("clone", [](const PyGraph &g) { return check(g.clone()); })
      .def(
          "run_pipeline",
          [](PyGraph &g, const std::string &pipeline) {
            Status s;
            {
              py::gil_scoped_release release;
              s = g.runPipeline(pipeline);
            }
            check(s);
          },
          py::arg("pipeline"))
      .def("remarks",
           [](const PyGraph &g) {
             py::list out;
             for (const gopt::PassRemark &r : g.remarks()) {
               py::dict d;
               d["pass"] = r.pass;
               d["message"] = r.message;
               d["location"] = r.location;
               out.append(d);
             }
             return out;
           })
      .def("ir", &PyGraph::ir, py::arg("elide_large_constants") = false)
      .def(
          "to_onnx",
          [](const PyGraph &g, int64_t opset) {
            return py::bytes(check(g.toOnnx(opset)));
          },
          py::arg("opset") = 0)
      .def("to_plan",
           [](const PyGraph &g) {
             gopt::plan::Plan proto = check(g.toPlan());
             return check(Plan::fromProto(std::move(proto), g.name()));
           })
      .def("save", [](const PyGraph &g,
                      const std::string &path) { check(g.save(path)); })
      .def("dim_names", &PyGraph::dimNames)
      .def_property_readonly("name", &PyGraph::name);

  m.def("available_passes", [] {
    py::list out;
    for (const gopt::PassDescription &p : gopt::availablePasses()) {
      py::dict d;
      d["name"] = p.name;
      d["description"] = p.description;
      d["kind"] = p.isPipeline ? "pipeline" : "pass";
      d["options"] = p.options;
      out.append(d);
    }
    return out;
  });
#endif
}
