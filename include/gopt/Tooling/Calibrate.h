//===- Calibrate.h - gopt-run --calibrate -----------------------*- C++ -*-===//
#ifndef GOPT_TOOLING_CALIBRATE_H
#define GOPT_TOOLING_CALIBRATE_H

#include "gopt/Tooling/Calibration.h"

#include <cstdint>
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

// Runs MODEL over the calibration batches and writes the ranges of every
// floating-point input and result of conv2d, matmul, add, bias_add, relu,
// relu6, clip, max_pool, avg_pool, global_avg_pool and concat ops, and of
// the graph inputs, to options.out (docs/quantization.md).
runtime::StatusOr<bool> runCalibration(const CalibrateOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_CALIBRATE_H
