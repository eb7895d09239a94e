//===- Run.h - Time, profile and compare a model ----------------*- C++ -*-===//
//
// gopt-run's inference modes as functions: runModel times MODEL and writes
// its reports (per-op profile, Chrome trace, JSON, outputs as .npy, checks
// against stored arrays); runCompare runs MODEL and another model on the
// same inputs and compares their outputs. Both print what gopt-run prints
// and return false when outputs differ beyond the tolerances.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_RUN_H
#define GOPT_TOOLING_RUN_H

#include "gopt/runtime/Session.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gopt::tooling {

struct RunOptions {
  std::string model;
  // A pass pipeline run on MODEL (not on compareModel) before lowering.
  std::string pipeline;
  std::string backend = "cpu";
  int64_t batch = 1;
  int threads = 0;
  size_t memoryLimit = 0;
  // NAME=FILE.npy input values; other inputs get deterministic random data.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string outputDir; // each output written as DIR/NAME.npy
  int warmup = 50;
  int iterations = 100;
  bool profile = false;  // print the per-op time table
  std::string traceFile; // a Chrome/Perfetto trace of one step
  std::string jsonFile;  // the report as JSON
  // runCompare: the other model, the backend both run on, and optional
  // class labels (an int .npy, one per input row) to score both.
  std::string compareModel;
  std::string compareBackend = "reference";
  std::string labelsFile;
  // runModel: output NAME compared with the array in FILE.npy.
  std::vector<std::pair<std::string, std::string>> compareNpy;
  // A uint16 .npy paired with a bf16 input or output holds bf16 bit
  // patterns (the caller says so: gopt-run does not guess a file's meaning).
  bool npyU16AsBf16 = false;
  // numpy.allclose's tolerances: |a - b| <= atol + rtol * |b|.
  double atol = 1e-5;
  double rtol = 1e-4;
};

/// Times `options.model` (warmup, then iterations) and prints latency,
/// throughput and memory, then the optional reports. False when a
/// compareNpy output is beyond the tolerances.
runtime::StatusOr<bool> runModel(const RunOptions &options);

/// Runs `options.model` and `options.compareModel` on
/// `options.compareBackend` with the same inputs and prints each output's
/// errors (and, for classifier outputs, top-k agreement and SQNR). False
/// when an output is beyond the tolerances.
runtime::StatusOr<bool> runCompare(const RunOptions &options);

/// A session of `model` for `backend` with the batch, threads and memory
/// limit of `options`; `pipeline` runs on graph files before lowering.
runtime::StatusOr<std::unique_ptr<runtime::Session>>
createSession(const std::string &model, const RunOptions &options,
              const std::string &backend, const std::string &pipeline);

/// The inputs a session sees: `options.inputs` read from their files, and
/// deterministic random data (fakeData) for the others.
runtime::StatusOr<std::map<std::string, runtime::Tensor>>
prepareInputs(const runtime::Session &session, const RunOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_RUN_H
