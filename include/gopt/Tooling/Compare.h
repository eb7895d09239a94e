//===- Compare.h - Numeric comparison of tensors ----------------*- C++ -*-===//
//
// What --compare and --compare-npy report: element-wise errors under
// numpy.allclose's criterion, and for classifier outputs ([N, C] scores)
// how often two models pick the same classes.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_COMPARE_H
#define GOPT_TOOLING_COMPARE_H

#include "gopt/runtime/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gopt::tooling {

/// Every element of `t` as a double (0 for dtypes without a value).
std::vector<double> toDoubles(const runtime::Tensor &t);

struct Comparison {
  double maxAbs = 0;
  double maxRel = 0;
  int64_t violations = 0; // elements beyond atol + rtol * |expected|
};

/// Compares `a` with `expected` as numpy.allclose does; NaN equals NaN.
/// Fails when the shapes differ, naming `what`.
runtime::StatusOr<Comparison> compareTensors(const std::string &what,
                                             const runtime::Tensor &a,
                                             const runtime::Tensor &expected,
                                             double atol, double rtol);

/// For a classifier's [N, C] scores: in how many rows the two tensors pick
/// the same class, and the mean overlap of their top-k (k = min(5, C))
/// sets; also the mean absolute error.
/// Agreement means little when the reference `b` picks one class for every
/// input (e.g. a randomly initialized network whose scores hardly depend
/// on the input): `referenceClasses` counts the distinct top-1 classes of
/// `b`, and the spreads say how much its scores vary across inputs (the
/// mean over classes of the standard deviation over rows) against across
/// classes (the mean over rows of the standard deviation over classes).
struct ClassAgreement {
  int64_t rows = 0, top1Same = 0, k = 0, referenceClasses = 0;
  int64_t referenceClass = 0; // b's top-1 of row 0
  double topKOverlap = 0, meanAbs = 0;
  // Signal-to-quantization-noise ratio, 10 log10(sum b^2 / sum (a - b)^2)
  // in dB (infinite when a == b), the usual figure for quantized outputs.
  double sqnrDb = 0;
  double spreadAcrossInputs = 0, spreadAcrossClasses = 0;
  std::vector<int64_t> top1, referenceTop1; // per row, of a and of b
};

/// nullopt unless `a` and `b` are floating-point [N, C] with N > 0, C >= 2.
std::optional<ClassAgreement> compareClasses(const runtime::Tensor &a,
                                             const runtime::Tensor &b);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_COMPARE_H
