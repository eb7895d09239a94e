//===- GradCheck.h - gopt-run --grad-check ----------------------*- C++ -*-===//
#ifndef GOPT_TOOLING_GRADCHECK_H
#define GOPT_TOOLING_GRADCHECK_H

#include "gopt/runtime/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gopt::tooling {

struct GradCheckOptions {
  std::string model;
  std::string backend = "reference";
  int64_t batch = 2;
  // As TrainOptions::loss.
  std::string loss = "softmax-cross-entropy";
  // Input values (NAME=FILE.npy); others get deterministic random data and
  // "labels" gets row % 2.
  std::vector<std::pair<std::string, std::string>> inputs;
  int64_t samplesPerParam = 8;
  double epsilon = 1e-2;
  double atol = 1e-3, rtol = 5e-2;
};

// Compiles MODEL with gopt-autodiff, then compares each parameter's
// gradient at `samplesPerParam` elements with central finite differences
// of the loss. True when all agree within atol + rtol * |gradient|.
runtime::StatusOr<bool> runGradCheck(const GradCheckOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_GRADCHECK_H
