//===- Compare.cpp - gopt-run --compare and tensor comparison -------------===//
#include "gopt/Tooling/Compare.h"
#include "gopt/Tooling/Run.h"

#include "gopt/runtime/LowPrecision.h"
#include "gopt/runtime/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace gopt::tooling {

using namespace runtime;

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numElements());
  const char *bytes = t.data<char>();
  size_t width = dtypeSize(t.dtype());
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[i] = decodeElement(t.dtype(), bytes + i * width);
  return v;
}

// numpy.allclose's criterion: |a - b| <= atol + rtol * |b|, b the expected.
StatusOr<Comparison> compareTensors(const std::string &what, const Tensor &a,
                                    const Tensor &expected, double atol,
                                    double rtol) {
  if (a.shape() != expected.shape())
    return invalidArgument(what, ": shape ", shapeToString(a.shape()),
                           " differs from expected ",
                           shapeToString(expected.shape()));
  std::vector<double> x = toDoubles(a), y = toDoubles(expected);
  Comparison c;
  for (size_t i = 0; i < x.size(); ++i) {
    double diff = std::fabs(x[i] - y[i]);
    bool bothNan = std::isnan(x[i]) && std::isnan(y[i]);
    // Equal infinities (float8 e5m2's overflow) match too; inf - inf is NaN.
    if (bothNan || x[i] == y[i])
      continue;
    if (std::isnan(diff))
      diff = INFINITY;
    double rel = diff / std::max(std::fabs(y[i]), 1e-30);
    c.maxAbs = std::max(c.maxAbs, diff);
    if (diff > 0)
      c.maxRel = std::max(c.maxRel, rel);
    if (!(diff <= atol + rtol * std::fabs(y[i])))
      ++c.violations;
  }
  return c;
}

namespace {

/// The mean standard deviation of the [rows, cols] `v` along rows
/// (byRow = false: over the rows of each column) or along each row.
double meanStdDev(const std::vector<double> &v, int64_t rows, int64_t cols,
                  bool byRow) {
  int64_t groups = byRow ? rows : cols, len = byRow ? cols : rows;
  double total = 0;
  for (int64_t g = 0; g < groups; ++g) {
    auto at = [&](int64_t i) {
      return byRow ? v[g * cols + i] : v[i * cols + g];
    };
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < len; ++i)
      mean += at(i);
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i)
      sq += (at(i) - mean) * (at(i) - mean);
    total += std::sqrt(sq / static_cast<double>(len));
  }
  return total / static_cast<double>(groups);
}

} // namespace

std::optional<ClassAgreement> compareClasses(const Tensor &a, const Tensor &b) {
  if (a.shape().size() != 2 || a.shape() != b.shape() ||
      !isFloatDType(a.dtype()) || !isFloatDType(b.dtype()))
    return std::nullopt;
  int64_t rows = a.shape()[0], cols = a.shape()[1];
  if (rows == 0 || cols < 2)
    return std::nullopt;
  std::vector<double> x = toDoubles(a), y = toDoubles(b);
  ClassAgreement r;
  r.rows = rows;
  r.k = std::min<int64_t>(5, cols);
  auto topK = [&](const std::vector<double> &v, int64_t row) {
    std::vector<int64_t> idx(cols);
    for (int64_t c = 0; c < cols; ++c)
      idx[c] = c;
    // Ties broken by the lower index, so equal scores agree.
    std::partial_sort(idx.begin(), idx.begin() + r.k, idx.end(),
                      [&](int64_t i, int64_t j) {
                        double vi = v[row * cols + i], vj = v[row * cols + j];
                        return vi > vj || (vi == vj && i < j);
                      });
    idx.resize(r.k);
    return idx;
  };
  double overlap = 0, absSum = 0;
  std::set<int64_t> referenceTop1;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> ta = topK(x, row), tb = topK(y, row);
    r.top1Same += ta[0] == tb[0];
    r.top1.push_back(ta[0]);
    r.referenceTop1.push_back(tb[0]);
    referenceTop1.insert(tb[0]);
    if (row == 0)
      r.referenceClass = tb[0];
    for (int64_t i : ta)
      overlap += std::count(tb.begin(), tb.end(), i);
  }
  r.referenceClasses = static_cast<int64_t>(referenceTop1.size());
  r.spreadAcrossInputs = meanStdDev(y, rows, cols, /*byRow=*/false);
  r.spreadAcrossClasses = meanStdDev(y, rows, cols, /*byRow=*/true);
  double signal = 0, noise = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    absSum += std::fabs(x[i] - y[i]);
    signal += y[i] * y[i];
    noise += (x[i] - y[i]) * (x[i] - y[i]);
  }
  r.sqnrDb = noise == 0 ? INFINITY : 10 * std::log10(signal / noise);
  r.topKOverlap = overlap / (static_cast<double>(rows) * r.k);
  r.meanAbs = absSum / static_cast<double>(x.size());
  return r;
}

namespace {

/// --labels: integer class labels, one per row (int64, int32 or uint8).
StatusOr<std::vector<int64_t>> readLabels(const std::string &file) {
  StatusOr<Tensor> read = readNpy(file);
  if (!read.ok())
    return Status(read.status().code(), "--labels: " + read.status().message());
  const Tensor &t = *read;
  if (t.shape().size() != 1)
    return invalidArgument("--labels '", file, "': expected a 1-D array of ",
                           "class labels, got shape ",
                           shapeToString(t.shape()));
  std::vector<int64_t> labels(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i) {
    switch (t.dtype()) {
    case DType::kI64:
      labels[i] = t.data<int64_t>()[i];
      break;
    case DType::kI32:
      labels[i] = t.data<int32_t>()[i];
      break;
    case DType::kU8:
      labels[i] = t.data<uint8_t>()[i];
      break;
    default:
      return invalidArgument("--labels '", file, "': expected int64, int32 ",
                             "or uint8 labels, got ", dtypeName(t.dtype()));
    }
  }
  return labels;
}

/// The top-1 accuracy of `a` (the model) and `b` (--compare) against
/// `labels` on output `name` ([rows, classes]).
Status printAccuracy(const std::string &name, const ClassAgreement &agreement,
                     int64_t classes, const std::vector<int64_t> &labels,
                     const std::string &file) {
  if (static_cast<int64_t>(labels.size()) != agreement.rows)
    return invalidArgument("--labels '", file, "' has ", labels.size(),
                           " labels for the ", agreement.rows, " rows of ",
                           "output '", name,
                           "' (set --batch to the number "
                           "of inputs)");
  int64_t correct = 0, referenceCorrect = 0;
  for (int64_t row = 0; row < agreement.rows; ++row) {
    int64_t label = labels[row];
    if (label < 0 || label >= classes)
      return invalidArgument("--labels '", file, "': label ", row, " is ",
                             label, ", outside the ", classes, " classes of ",
                             "output '", name, "'");
    correct += agreement.top1[row] == label;
    referenceCorrect += agreement.referenceTop1[row] == label;
  }
  double n = static_cast<double>(agreement.rows);
  std::printf("%s: accuracy %lld/%lld (%.2f%%), reference %lld/%lld "
              "(%.2f%%): %+.2f points\n",
              name.c_str(), static_cast<long long>(correct),
              static_cast<long long>(agreement.rows), 100.0 * correct / n,
              static_cast<long long>(referenceCorrect),
              static_cast<long long>(agreement.rows),
              100.0 * referenceCorrect / n,
              100.0 * (correct - referenceCorrect) / n);
  return Status::success();
}

} // namespace

StatusOr<bool> runCompare(const RunOptions &options) {
  std::vector<int64_t> labels;
  if (!options.labelsFile.empty()) {
    // Read first: a bad file fails before two sessions are built.
    GOPT_ASSIGN_OR_RETURN(labels, readLabels(options.labelsFile));
  }
  GOPT_ASSIGN_OR_RETURN(auto a, createSession(options.model, options,
                                              options.compareBackend,
                                              options.pipeline));
  GOPT_ASSIGN_OR_RETURN(auto b, createSession(options.compareModel, options,
                                              options.compareBackend, ""));
  GOPT_ASSIGN_OR_RETURN(auto inputs, prepareInputs(*a, options));
  for (const TensorDesc &d : b->inputs())
    if (!inputs.count(d.name))
      return notFound("'", options.compareModel, "' has input '", d.name,
                      "' that '", options.model, "' lacks");
  for (const auto &[name, t] : inputs)
    GOPT_RETURN_IF_ERROR(a->setInput(name, t));
  for (const auto &[name, t] : inputs) {
    bool used = false;
    for (const TensorDesc &d : b->inputs())
      used |= d.name == name;
    if (used)
      GOPT_RETURN_IF_ERROR(b->setInput(name, t));
  }
  GOPT_RETURN_IF_ERROR(a->run());
  GOPT_RETURN_IF_ERROR(b->run());
  bool allClose = true;
  std::vector<std::pair<std::string, std::optional<ClassAgreement>>> agreements;
  std::map<std::string, int64_t> classes; // of each [N, C] output
  std::printf("%-24s %14s %14s  %s\n", "output", "max_abs_err", "max_rel_err",
              "result");
  for (const TensorDesc &d : a->outputs()) {
    GOPT_ASSIGN_OR_RETURN(Tensor ta, a->output(d.name));
    StatusOr<Tensor> tb = b->output(d.name);
    if (!tb.ok())
      return notFound("'", options.compareModel, "' has no output '", d.name,
                      "'");
    GOPT_ASSIGN_OR_RETURN(Comparison c,
                          compareTensors("output '" + d.name + "'", ta, *tb,
                                         options.atol, options.rtol));
    bool ok = c.violations == 0;
    allClose &= ok;
    std::printf("%-24s %14.6g %14.6g  %s\n", d.name.c_str(), c.maxAbs, c.maxRel,
                ok ? "ok" : "MISMATCH");
    agreements.emplace_back(d.name, compareClasses(ta, *tb));
    if (ta.shape().size() == 2)
      classes[d.name] = ta.shape()[1];
  }
  bool anyClassifier = false;
  for (const auto &[name, agreement] : agreements)
    anyClassifier |= agreement.has_value();
  if (!labels.empty() && !anyClassifier)
    return invalidArgument("--labels '", options.labelsFile, "': the model ",
                           "has no classifier output ([N, C] scores with C ",
                           ">= 2) to score");
  // Classifier outputs ([N, C]): how often the two models agree, the figure
  // that matters for quantized or reduced-precision graphs.
  for (const auto &[name, agreement] : agreements) {
    if (!agreement)
      continue;
    std::printf("%s: mean_abs_err %.6g, top-1 agreement %lld/%lld (%.2f%%), "
                "top-%lld overlap %.2f%%, SQNR %.1f dB\n",
                name.c_str(), agreement->meanAbs,
                static_cast<long long>(agreement->top1Same),
                static_cast<long long>(agreement->rows),
                100.0 * agreement->top1Same / agreement->rows,
                static_cast<long long>(agreement->k),
                100.0 * agreement->topKOverlap, agreement->sqnrDb);
    if (agreement->rows > 1 && agreement->referenceClasses == 1)
      std::printf(
          "note: %s: the reference's top-1 is class %lld for all %lld "
          "inputs (its scores vary by %.3g across inputs, %.3g "
          "across classes): top-k agreement says little about "
          "accuracy here; compare the errors\n",
          name.c_str(), static_cast<long long>(agreement->referenceClass),
          static_cast<long long>(agreement->rows),
          agreement->spreadAcrossInputs, agreement->spreadAcrossClasses);
    if (!options.labelsFile.empty())
      GOPT_RETURN_IF_ERROR(printAccuracy(name, *agreement, classes[name],
                                         labels, options.labelsFile));
  }
  std::printf("tolerance: atol %g, rtol %g: %s\n", options.atol, options.rtol,
              allClose ? "outputs match" : "outputs differ");
  return allClose;
}

} // namespace gopt::tooling
