//===- Calibration.h - Activation ranges for int8 quantization --*- C++ -*-===//
//
// The statistics behind `gopt-run --calibrate`: running min/max, a histogram
// of |x|, and the three ways of turning them into the symmetric clip
// threshold T that an int8 quantizer uses (scale = T / 127). No runtime
// session here, so the math is unit-tested on its own.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_CALIBRATION_H
#define GOPT_TOOLING_CALIBRATION_H

#include "gopt/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gopt::tooling {

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };

// "minmax", "percentile", "entropy".
const char *calibrationMethodName(CalibrationMethod method);
std::optional<CalibrationMethod> parseCalibrationMethod(const std::string &s);

// Bins of the |x| histogram: TensorRT's entropy calibrator uses 2048, and the
// percentile method shares the histogram.
constexpr int kHistogramBins = 2048;
// int8 has 127 positive levels and zero: TensorRT merges the histogram into
// 128 levels when it compares distributions.
constexpr int kQuantizedLevels = 128;

// A histogram of |x| over the fixed range [0, range]: bin i counts
// i * width <= |x| < (i + 1) * width, width = range / bins, and values at or
// above `range` fall into the last bin.
class AbsHistogram {
public:
  explicit AbsHistogram(double range, int bins = kHistogramBins);
  void add(const float *values, int64_t count);

  double range() const { return range_; }
  double binWidth() const { return width_; }
  const std::vector<int64_t> &counts() const { return counts_; }
  int64_t total() const { return total_; }

private:
  double range_, width_;
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

// The smallest bin edge t with at least `percentile` % of the values at
// |x| <= t (percentile in (0, 100]); 100 gives the range. 0 when empty.
double percentileThreshold(const AbsHistogram &histogram, double percentile);

// TensorRT's entropy (KL-divergence) threshold; see Calibration.cpp.
double entropyThreshold(const AbsHistogram &histogram,
                        int levels = kQuantizedLevels);

// Everything the later quantization pass needs about one tensor.
struct TensorRange {
  std::string name; // the plan tensor name
  float min = 0, max = 0;
  double threshold = 0; // symmetric |x| clip
};

struct CalibrationResult {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 0; // for kPercentile
  std::string model;     // the model's file name, without directories
  int64_t batches = 0;
  std::vector<TensorRange> tensors;
};

// The JSON document (docs/quantization.md), one tensor per line.
std::string calibrationToJson(const CalibrationResult &result);

// Writes `contents` to `path` atomically: a temporary file in the same
// directory, renamed over `path` only when it is complete.
runtime::Status writeFileAtomically(const std::string &path,
                                    const std::string &contents);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_CALIBRATION_H
