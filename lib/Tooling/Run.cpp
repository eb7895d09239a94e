//===- Run.cpp - gopt-run: time and profile a model -----------------------===//
#include "gopt/Tooling/Run.h"
#include "gopt/Tooling/Compare.h"
#include "gopt/Tooling/FakeData.h"
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/Tooling/NpyFileName.h"
#include "gopt/Tooling/Profile.h"
#include "gopt/Tooling/Report.h"

#include "gopt/runtime/LowPrecision.h"
#include "gopt/runtime/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace gopt::tooling {

using namespace runtime;

/// numpy has no bfloat16; onnx's numpy_helper writes its bit patterns as
/// uint16. Reading them as bf16 would guess at the file's meaning, so the
/// pairing is refused unless the caller says the file holds bf16 bits
/// (--npy-u16-as-bf16); then `t` becomes a bf16 tensor of the same bits.
static Status matchBf16Bits(const std::string &what, Tensor &t, DType wanted,
                            bool u16AsBf16) {
  if (wanted != DType::kBF16 || t.dtype() != DType::kU16)
    return Status::success();
  if (!u16AsBf16)
    return unimplemented(what, ": bf16 given as a uint16 .npy is not "
                               "supported (numpy has no bfloat16; pass "
                               "--npy-u16-as-bf16 if it holds bf16 bits)");
  Tensor bits = Tensor::allocate(DType::kBF16, t.shape());
  std::memcpy(bits.data(), t.data(), t.byteSize());
  t = bits;
  return Status::success();
}

/// numpy has no float8 or 4-bit types either: a float8 input reads an f32
/// .npy (each value rounded to nearest even, saturating, as ONNX's Cast), an
/// i4/u4 input an int8/uint8 one whose values must fit in 4 bits (the
/// forms gopt-run writes such outputs in).
static Status matchLowPrecision(const std::string &what, Tensor &t,
                                DType wanted) {
  if (!isLowPrecisionDType(wanted) || t.dtype() == wanted)
    return Status::success();
  bool fourBit = wanted == DType::kI4 || wanted == DType::kU4;
  DType file = !fourBit               ? DType::kF32
               : wanted == DType::kI4 ? DType::kI8
                                      : DType::kU8;
  if (t.dtype() != file)
    return invalidArgument(what, ": a ", dtypeName(wanted), " input needs a ",
                           dtypeName(file), " .npy, got ",
                           dtypeName(t.dtype()));
  Tensor converted = Tensor::allocate(wanted, t.shape());
  auto *out = converted.data<uint8_t>();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = !fourBit             ? t.data<float>()[i]
               : file == DType::kI8 ? t.data<int8_t>()[i]
                                    : t.data<uint8_t>()[i];
    if (fourBit && lowPrecisionToDouble(
                       wanted, lowPrecisionFromDouble(wanted, v, true)) != v)
      return invalidArgument(what, ": value ", v, " at element ", i,
                             " does not fit in ", dtypeName(wanted));
    out[i] = lowPrecisionFromDouble(wanted, v, /*saturate=*/true);
  }
  t = converted;
  return Status::success();
}

StatusOr<std::map<std::string, Tensor>>
prepareInputs(const Session &session, const RunOptions &options) {
  std::map<std::string, Tensor> inputs;
  std::vector<TensorDesc> descs = session.inputs();
  for (const auto &[name, file] : options.inputs) {
    bool known =
        std::any_of(descs.begin(), descs.end(),
                    [&](const TensorDesc &d) { return d.name == name; });
    if (!known)
      return notFound("--input ", name, ": the model has no input named '",
                      name, "'");
    GOPT_ASSIGN_OR_RETURN(Tensor t, readNpy(file));
    auto desc =
        std::find_if(descs.begin(), descs.end(),
                     [&](const TensorDesc &d) { return d.name == name; });
    GOPT_RETURN_IF_ERROR(
        matchBf16Bits("--input " + name, t, desc->dtype, options.npyU16AsBf16));
    GOPT_RETURN_IF_ERROR(matchLowPrecision("--input " + name, t, desc->dtype));
    inputs[name] = t;
  }
  uint32_t seed = 0;
  for (const TensorDesc &d : descs) {
    ++seed;
    if (!inputs.count(d.name))
      inputs[d.name] = fakeData(d, seed);
  }
  return inputs;
}

namespace {

Status setInputs(Session &session,
                 const std::map<std::string, Tensor> &inputs) {
  for (const auto &[name, t] : inputs)
    GOPT_RETURN_IF_ERROR(session.setInput(name, t));
  return Status::success();
}

// The batch a run computes: an --input whose leading dimension differs
// from the one resolved for --batch re-resolves the plan's dynamic batch
// (a static dimension would have refused it), so the report counts its
// images, not --batch's.
int64_t batchRun(const std::vector<TensorDesc> &resolved,
                 const std::map<std::string, Tensor> &inputs, int64_t batch) {
  for (const TensorDesc &d : resolved) {
    auto given = inputs.find(d.name);
    if (given == inputs.end() || d.shape.empty() || d.shape[0] != batch)
      continue;
    const Shape &shape = given->second.shape();
    if (shape.size() == d.shape.size() && shape[0] != batch)
      return shape[0];
  }
  return batch;
}

} // namespace

StatusOr<std::unique_ptr<Session>> createSession(const std::string &model,
                                                 const RunOptions &options,
                                                 const std::string &backend,
                                                 const std::string &pipeline) {
  ModelLoadOptions load;
  load.backend = backend;
  load.batchSize = options.batch;
  load.pipeline = pipeline;
  GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(model, load));
  warnIfReducedPrecisionIsSlow(plan, backend);
  SessionOptions so;
  so.backend = backend;
  so.batchSize = options.batch;
  so.threads = options.threads;
  so.memoryLimitBytes = options.memoryLimit;
  return Session::create(plan, so);
}

StatusOr<bool> runModel(const RunOptions &given) {
  GOPT_ASSIGN_OR_RETURN(
      auto session,
      createSession(given.model, given, given.backend, given.pipeline));
  GOPT_ASSIGN_OR_RETURN(auto inputs, prepareInputs(*session, given));
  RunOptions options = given;
  options.batch = batchRun(session->inputs(), inputs, given.batch);
  GOPT_RETURN_IF_ERROR(setInputs(*session, inputs));

  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < options.warmup; ++i)
    GOPT_RETURN_IF_ERROR(session->run());
  session->resetProfiles();
  std::vector<double> times;
  for (int i = 0; i < options.iterations; ++i) {
    Clock::time_point start = Clock::now();
    GOPT_RETURN_IF_ERROR(session->run());
    times.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start)
            .count());
  }
  std::vector<OpProfile> rows = sortedProfiles(*session);
  Timing t = summarizeTimes(times);
  double throughput = t.medianMs > 0 ? options.batch * 1000.0 / t.medianMs : 0;
  MemoryStats m = session->memoryStats();

  std::string waitPolicy = openMPWaitDescription();
  const char *affinity = std::getenv("GOPT_AFFINITY_CHOICE");
  std::printf("model: %s  backend: %s  batch: %lld  threads: %d  "
              "omp-wait: %s%s%s\n",
              options.model.c_str(), options.backend.c_str(),
              static_cast<long long>(options.batch), options.threads,
              waitPolicy.c_str(), affinity ? "  affinity: " : "",
              affinity ? affinity : "");
  std::printf("latency (ms): median %.4f  p90 %.4f  min %.4f  (%d iterations "
              "after %d warm-up)\n",
              t.medianMs, t.p90Ms, t.minMs, options.iterations, options.warmup);
  std::printf("throughput: %.2f samples/s\n", throughput);
  double flops = flopsPerStep(rows);
  if (flops > 0 && t.medianMs > 0)
    std::printf("arithmetic: %.4g GFLOP per step (convolutions, matmuls, "
                "recurrences) = %.1f GFLOP/s at the median\n",
                flops / 1e9, flops / (t.medianMs * 1e6));
  std::printf("memory: arena %s vs. %s for all intermediates without reuse; "
              "constants %s; total %s\n",
              formatBytes(m.arenaBytes).c_str(),
              formatBytes(m.intermediateBytes).c_str(),
              formatBytes(m.constantBytes).c_str(),
              formatBytes(m.totalBytes()).c_str());
  if (options.profile)
    printProfile(rows);

  if (!options.traceFile.empty()) {
    // One more step, so the trace shows a single run.
    Clock::time_point start = Clock::now();
    GOPT_RETURN_IF_ERROR(session->run());
    double stepMs =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    GOPT_RETURN_IF_ERROR(writeTrace(options.traceFile, *session, stepMs));
  }
  if (!options.jsonFile.empty())
    GOPT_RETURN_IF_ERROR(
        writeJsonReport(options.jsonFile, options, t, throughput, m, rows));
  if (!options.outputDir.empty()) {
    mkdir(options.outputDir.c_str(), 0777);
    for (const TensorDesc &d : session->outputs()) {
      GOPT_ASSIGN_OR_RETURN(Tensor out, session->output(d.name));
      GOPT_RETURN_IF_ERROR(
          writeNpy(options.outputDir + "/" + npyFileName(d.name), out));
    }
  }
  bool allClose = true;
  for (const auto &[name, file] : options.compareNpy) {
    StatusOr<Tensor> actual = session->output(name);
    if (!actual.ok())
      return notFound("--compare-npy ", name, ": the model has no output '",
                      name, "'");
    GOPT_ASSIGN_OR_RETURN(Tensor expected, readNpy(file));
    GOPT_RETURN_IF_ERROR(matchBf16Bits("--compare-npy " + name, expected,
                                       actual->dtype(), options.npyU16AsBf16));
    GOPT_ASSIGN_OR_RETURN(
        Comparison c,
        compareTensors("output '" + name + "' vs. '" + file + "'", *actual,
                       expected, options.atol, options.rtol));
    bool ok = c.violations == 0;
    allClose &= ok;
    std::printf("compare %s with %s: max_abs_err %.6g max_rel_err %.6g: %s\n",
                name.c_str(), file.c_str(), c.maxAbs, c.maxRel,
                ok ? "ok" : "MISMATCH");
  }
  return allClose;
}

} // namespace gopt::tooling
