//===- Calibrate.h - gopt-run --calibrate -----------------------*- C++ -*-===//
#ifndef GOPT_TOOLING_CALIBRATE_H
#define GOPT_TOOLING_CALIBRATE_H

#include "gopt/Tooling/Calibration.h"
#include "gopt/runtime/Session.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gopt::tooling {

struct CalibrateOptions {
  std::string model;
  std::string pipeline; // run on MODEL before lowering; names follow it
  std::string backend = "cpu";
  int64_t batch = 1; // rows of the --input files per run
  int threads = 0;
  size_t memoryLimit = 0;
  // NAME=FILE.npy: a batch of real inputs, split into runs of `batch` rows
  // along the first dimension. Other inputs get deterministic random data.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string out; // the JSON file
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;
  // Most batches to run; 0: every full batch of the --input files, or one
  // batch when all inputs are random.
  int64_t maxBatches = 0;
};

// The inputs of each calibration run, in the order of the session's inputs.
// Calibration with a histogram method reads every batch twice, and both
// reads must give the same values.
class CalibrationBatches {
public:
  virtual ~CalibrationBatches() = default;
  virtual int64_t count() const = 0;
  virtual runtime::StatusOr<std::vector<runtime::Tensor>>
  batch(int64_t k) const = 0;
};

// Makes the batches once the session's inputs are known.
using CalibrationBatchFactory =
    std::function<runtime::StatusOr<std::unique_ptr<CalibrationBatches>>(
        const std::vector<runtime::TensorDesc> &inputs)>;

// Batches given as tensors by input name (an embedder's arrays): every batch
// must feed every input, and only inputs. The tensors must outlive the
// calibration.
CalibrationBatchFactory calibrationBatchesFromTensors(
    std::vector<std::map<std::string, runtime::Tensor>> batches);

// Runs `plan` over the batches with the session settings, method and
// percentile of `options` (its model, inputs, out and maxBatches are not
// used) and returns the ranges; the result names the model `modelName`.
runtime::StatusOr<CalibrationResult>
calibratePlan(const runtime::Plan &plan, const CalibrateOptions &options,
              const CalibrationBatchFactory &makeBatches,
              const std::string &modelName);

// Runs MODEL over the calibration batches and writes the ranges of every
// floating-point input and result of conv2d, matmul, add, bias_add, relu,
// relu6, clip, max_pool, avg_pool, global_avg_pool and concat ops, and of
// the graph inputs, to options.out (docs/quantization.md).
runtime::StatusOr<bool> runCalibration(const CalibrateOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_CALIBRATE_H
