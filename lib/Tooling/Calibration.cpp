//===- Calibration.cpp - Activation ranges for int8 quantization ----------===//
#include "gopt/Tooling/Calibration.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>

namespace gopt::tooling {

using runtime::Status;

const char *calibrationMethodName(CalibrationMethod method) {
  switch (method) {
  case CalibrationMethod::kMinMax:
    return "minmax";
  case CalibrationMethod::kPercentile:
    return "percentile";
  case CalibrationMethod::kEntropy:
    return "entropy";
  }
  return "?";
}

std::optional<CalibrationMethod> parseCalibrationMethod(const std::string &s) {
  for (CalibrationMethod m :
       {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile,
        CalibrationMethod::kEntropy})
    if (s == calibrationMethodName(m))
      return m;
  return std::nullopt;
}

AbsHistogram::AbsHistogram(double range, int bins)
    : range_(range), width_(range / bins), counts_(bins, 0) {}

void AbsHistogram::add(const float *values, int64_t count) {
  const int64_t last = static_cast<int64_t>(counts_.size()) - 1;
  for (int64_t i = 0; i < count; ++i) {
    double a = std::fabs(static_cast<double>(values[i]));
    // The comparison also sends |x| == range (and a zero range) to the
    // last bin without dividing by a zero width.
    int64_t bin =
        a < range_ ? std::min(last, static_cast<int64_t>(a / width_)) : last;
    ++counts_[bin];
  }
  total_ += count;
}

double percentileThreshold(const AbsHistogram &histogram, double percentile) {
  const std::vector<int64_t> &counts = histogram.counts();
  if (histogram.total() == 0)
    return 0;
  // A decimal percentile is rarely exact in binary: 99.9% of 1000 values
  // must mean 999, not 999.0000000000001.
  double target = percentile * static_cast<double>(histogram.total()) / 100.0;
  target *= 1 - 1e-12;
  int64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    if (static_cast<double>(cumulative) >= target)
      return std::min(histogram.range(), (i + 1) * histogram.binWidth());
  }
  return histogram.range();
}

namespace {

/// MXNet's and onnxruntime's `_smooth_distribution`: gives every empty bin
/// `eps` counts, taken evenly from the non-empty ones, so that KL(P || Q) is
/// finite where Q has no mass but P has. False when all bins are empty.
bool smoothDistribution(std::vector<double> &d, double eps = 1e-4) {
  int64_t zeros = std::count(d.begin(), d.end(), 0.0);
  int64_t nonzeros = static_cast<int64_t>(d.size()) - zeros;
  if (nonzeros == 0)
    return false;
  double taken = eps * static_cast<double>(zeros) / nonzeros;
  for (double &v : d)
    v = v == 0 ? eps : v - taken;
  return std::all_of(d.begin(), d.end(), [](double v) { return v > 0; });
}

} // namespace

// TensorRT's entropy calibration ("8-bit Inference with TensorRT", Migacz,
// GTC 2017; the same loop as MXNet's and onnxruntime's calibrators):
//
//   for i in [levels, bins]:           # candidate threshold: i bins
//     P = hist[0:i]; P[i-1] += sum(hist[i:])   # clip the outliers into P
//     Q = hist[0:i] merged into `levels` groups of i / levels bins (the
//         last group takes the remainder), each group's count spread
//         evenly over its bins where P is non-zero
//     smooth P and Q (empty bins get a tiny mass), normalize them
//     divergence[i] = KL(P || Q) = sum P log(P / Q)
//   threshold = i * bin width for the i with the smallest divergence
//
// P is what the tensor looks like when clipped at the candidate threshold,
// Q what is left of it after int8 rounding; the threshold loses the least
// information, trading clipping error (small i) against rounding error
// (large i). The first minimum wins, so the result is deterministic.
//
// As in NVIDIA's pytorch-quantization (TensorRT's calibration tool), bin 0
// first takes bin 1's count: the exact zeros of a ReLU's output (often half
// of it) quantize exactly at any scale, yet would dominate P and pull the
// threshold far below the values that matter.
double entropyThreshold(const AbsHistogram &histogram, int levels) {
  const int bins = static_cast<int>(histogram.counts().size());
  if (histogram.total() == 0 || histogram.range() <= 0)
    return 0;
  if (bins <= levels)
    return histogram.range();
  std::vector<double> hist(histogram.counts().begin(),
                           histogram.counts().end());
  hist[0] = hist[1];
  std::vector<double> above(bins + 1, 0); // above[i] = sum(hist[i:])
  for (int i = bins - 1; i >= 0; --i)
    above[i] = above[i + 1] + hist[i];

  double bestDivergence = std::numeric_limits<double>::infinity();
  int best = bins;
  std::vector<double> p, q;
  for (int i = levels; i <= bins; ++i) {
    p.assign(hist.begin(), hist.begin() + i);
    p[i - 1] += above[i];
    q.assign(i, 0);
    const int merged = i / levels;
    for (int g = 0; g < levels; ++g) {
      int begin = g * merged, end = g == levels - 1 ? i : begin + merged;
      double sum = 0;
      int nonzero = 0;
      for (int j = begin; j < end; ++j) {
        sum += hist[j];
        nonzero += p[j] != 0;
      }
      for (int j = begin; nonzero && j < end; ++j)
        if (p[j] != 0)
          q[j] = sum / nonzero;
    }
    if (!smoothDistribution(p) || !smoothDistribution(q))
      continue;
    double sumP = 0, sumQ = 0;
    for (int j = 0; j < i; ++j) {
      sumP += p[j];
      sumQ += q[j];
    }
    double divergence = 0;
    for (int j = 0; j < i; ++j) {
      double pj = p[j] / sumP, qj = q[j] / sumQ;
      divergence += pj * std::log(pj / qj);
    }
    if (divergence < bestDivergence) {
      bestDivergence = divergence;
      best = i;
    }
  }
  return std::min(histogram.range(), best * histogram.binWidth());
}

static std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Nine significant digits round-trip an f32, which is what ranges are.
static std::string jsonNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string calibrationToJson(const CalibrationResult &r) {
  std::string out = "{\n  \"format\": \"gopt-calibration\",\n"
                    "  \"version\": 1,\n  \"method\": " +
                    jsonString(calibrationMethodName(r.method)) + ",\n";
  if (r.method == CalibrationMethod::kPercentile)
    out += "  \"percentile\": " + jsonNumber(r.percentile) + ",\n";
  out += "  \"model\": " + jsonString(r.model) +
         ",\n  \"batches\": " + std::to_string(r.batches) +
         ",\n  \"tensors\": {";
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorRange &t = r.tensors[i];
    out += (i ? ",\n    " : "\n    ") + jsonString(t.name) +
           ": {\"min\": " + jsonNumber(t.min) +
           ", \"max\": " + jsonNumber(t.max) +
           ", \"threshold\": " + jsonNumber(t.threshold) + "}";
  }
  return out + "\n  }\n}\n";
}

Status writeFileAtomically(const std::string &path,
                           const std::string &contents) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  FILE *file = std::fopen(temp.c_str(), "wb");
  if (!file)
    return runtime::notFound("cannot write '", path,
                             "': ", std::strerror(errno));
  bool ok =
      std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  ok &= std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  ok &= std::fclose(file) == 0;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    return runtime::dataLoss("cannot write '", path, "': ", why);
  }
  return Status::success();
}

} // namespace gopt::tooling
