//===- IndexingShapes.cpp - Shape functions of the indexing ops -----------===//
//
// gather, scatter, arg_max/arg_min and cumsum (GoptIndexingOps.td), following
// docs/op-semantics.md. No LLVM or MLIR: the runtime-only build compiles this
// file too.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gopt::shape {

using detail::fail;

namespace {

/// The most n-gram element comparisons a tf_idf_vectorizer may make (every
/// start at every skip of every length, every row): about a second of the
/// reference kernel where every start matches (2^30 let a 293-byte plan run
/// for 4-15 s). Real vectorizers (thousands of tokens, a few skips) stay far
/// below it.
constexpr double kMaxTfIdfVectorizerWork = 1u << 27;

bool compatible(int64_t a, int64_t b) {
  return isDynamic(a) || isDynamic(b) || a == b;
}

bool compatible(DimsRef a, DimsRef b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!compatible(a[i], b[i]))
      return false;
  return true;
}

/// Indices that address `x` along every axis but `axis` element for element
/// (gather_elements, scatter_elements): same rank, no larger off the axis.
Result checkElementIndices(DimsRef x, DimsRef indices, int64_t axis,
                           int64_t &normalized) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  if (Result r = normalizeAxis(axis, x.size(), "axis", normalized); r.failed())
    return r;
  if (indices.size() != x.size())
    return fail("expects indices of rank ", x.size(), " (that of x ",
                formatShape(x), "), got ", formatShape(indices));
  for (size_t d = 0; d < x.size(); ++d)
    if (static_cast<int64_t>(d) != normalized && !isDynamic(x[d]) &&
        !isDynamic(indices[d]) && indices[d] > x[d])
      return fail("expects indices ", formatShape(indices),
                  " no larger than x ", formatShape(x), " off axis ",
                  normalized);
  return Result::success();
}

/// The size of the index tuples of gather_nd/scatter_nd: indices' last
/// dimension, static, in [1, available].
Result indexTupleSize(DimsRef indices, int64_t available, int64_t &size) {
  if (indices.empty())
    return fail("expects indices of rank >= 1, got a scalar");
  size = indices.back();
  if (isDynamic(size))
    return fail("expects the last dimension of indices to be static, got ",
                formatShape(indices));
  if (size < 1 || size > available)
    return fail("expects the last dimension of indices ", formatShape(indices),
                " in [1, ", available, "]");
  return Result::success();
}

Result checkReduction(std::string_view reduction) {
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return fail("expects reduction \"none\", \"add\", \"mul\", \"max\" or "
                "\"min\", got \"",
                reduction, "\"");
  return Result::success();
}

} // namespace

Result inferGatherShape(DimsRef x, DimsRef indices, int64_t axis,
                        Dims &result) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  int64_t a;
  if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
    return r;
  result.assign(x.begin(), x.begin() + a);
  result.insert(result.end(), indices.begin(), indices.end());
  result.insert(result.end(), x.begin() + a + 1, x.end());
  return Result::success();
}

Result inferGatherGradShape(DimsRef x, DimsRef indices, DimsRef dy,
                            int64_t axis, Dims &result) {
  Dims gathered;
  if (Result r = inferGatherShape(x, indices, axis, gathered); r.failed())
    return r;
  if (!compatible(dy, gathered))
    return fail("expects dy of shape ", formatShape(gathered),
                " (gather's result), got ", formatShape(dy));
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferGatherElementsShape(DimsRef x, DimsRef indices, int64_t axis,
                                Dims &result) {
  int64_t a;
  if (Result r = checkElementIndices(x, indices, axis, a); r.failed())
    return r;
  result.assign(indices.begin(), indices.end());
  return Result::success();
}

Result inferGatherNDShape(DimsRef x, DimsRef indices, int64_t batchDims,
                          Dims &result) {
  int64_t rank = x.size(), indicesRank = indices.size();
  if (rank == 0)
    return fail("expects x of rank >= 1, got a scalar");
  if (batchDims < 0 || batchDims >= std::min(rank, indicesRank))
    return fail("expects batch_dims in [0, ", std::min(rank, indicesRank),
                ") (below the ranks of x ", formatShape(x), " and indices ",
                formatShape(indices), "), got ", batchDims);
  int64_t k;
  if (Result r = indexTupleSize(indices, rank - batchDims, k); r.failed())
    return r;
  for (int64_t d = 0; d < batchDims; ++d)
    if (!compatible(x[d], indices[d]))
      return fail("expects the first ", batchDims, " dimensions of indices ",
                  formatShape(indices), " to equal those of x ",
                  formatShape(x));
  result.assign(indices.begin(), indices.end() - 1);
  for (int64_t d = 0; d < batchDims; ++d)
    if (isDynamic(result[d]))
      result[d] = x[d];
  result.insert(result.end(), x.begin() + batchDims + k, x.end());
  return Result::success();
}

Result inferScatterElementsShape(DimsRef x, DimsRef indices, DimsRef updates,
                                 int64_t axis, std::string_view reduction,
                                 Dims &result) {
  if (Result r = checkReduction(reduction); r.failed())
    return r;
  int64_t a;
  if (Result r = checkElementIndices(x, indices, axis, a); r.failed())
    return r;
  if (!compatible(indices, updates))
    return fail("expects updates of the shape of indices ",
                formatShape(indices), ", got ", formatShape(updates));
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferScatterNDShape(DimsRef x, DimsRef indices, DimsRef updates,
                           std::string_view reduction, Dims &result) {
  if (Result r = checkReduction(reduction); r.failed())
    return r;
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  int64_t k;
  if (Result r = indexTupleSize(indices, x.size(), k); r.failed())
    return r;
  Dims expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), x.begin() + k, x.end());
  if (!compatible(updates, expected))
    return fail("expects updates of shape ", formatShape(expected),
                " (indices' leading dimensions, then x's after the ", k,
                " indexed ones), got ", formatShape(updates));
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferArgReduceShape(DimsRef x, int64_t axis, bool keepDims,
                           Dims &result) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  int64_t a;
  if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
    return r;
  result.assign(x.begin(), x.end());
  if (keepDims)
    result[a] = 1;
  else
    result.erase(result.begin() + a);
  return Result::success();
}

Result inferCumSumShape(DimsRef x, int64_t axis, Dims &result) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  int64_t a;
  if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
    return r;
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferTfIdfVectorizerShape(DimsRef x, int64_t minGramLength,
                                 int64_t maxGramLength, int64_t maxSkipCount,
                                 DimsRef ngramCounts, DimsRef ngramIndexes,
                                 DimsRef pool, size_t numWeights,
                                 Dims &result) {
  if (x.size() != 1 && x.size() != 2)
    return fail("expects x of rank 1 or 2, got rank ", x.size());
  if (minGramLength < 1 || maxGramLength < minGramLength)
    return fail("expects 1 <= min_gram_length <= max_gram_length, got ",
                minGramLength, " and ", maxGramLength);
  if (maxSkipCount < 0)
    return fail("expects max_skip_count >= 0, got ", maxSkipCount);
  // Every n-gram length up to max_gram_length has its start in the pool.
  if (static_cast<int64_t>(ngramCounts.size()) < maxGramLength)
    return fail("expects ngram_counts of at least max_gram_length (",
                maxGramLength, ") starts, got ", ngramCounts.size());
  int64_t ngrams = 0;
  for (size_t n = 0; n < ngramCounts.size(); ++n) {
    int64_t begin = ngramCounts[n];
    int64_t end = n + 1 < ngramCounts.size()
                      ? ngramCounts[n + 1]
                      : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % static_cast<int64_t>(n + 1) != 0)
      return fail("ngram_counts[", n, "] = ", begin,
                  " does not start a run of ", n + 1, "-grams in a pool of ",
                  pool.size());
    ngrams += (end - begin) / static_cast<int64_t>(n + 1);
  }
  if (static_cast<int64_t>(ngramIndexes.size()) != ngrams)
    return fail("expects one ngram_indexes entry per n-gram (", ngrams,
                "), got ", ngramIndexes.size());
  if (numWeights != 0 && static_cast<int64_t>(numWeights) != ngrams)
    return fail("expects one weight per n-gram (", ngrams, "), got ",
                numWeights);
  int64_t columns = 0;
  for (int64_t index : ngramIndexes) {
    if (index < 0)
      return fail("expects ngram_indexes >= 0, got ", index);
    columns = std::max(columns, index + 1);
  }
  // Every start at every skip is one lookup, so a long row with a large
  // max_skip_count is quadratic in the row's length: refuse what would run
  // for minutes (or hours) instead of starting it.
  if (std::none_of(x.begin(), x.end(), isDynamic)) {
    double rows = x.size() == 2 ? static_cast<double>(x[0]) : 1.0;
    double length = static_cast<double>(x.back());
    double lookups = 0;
    for (int64_t n = minGramLength; n <= maxGramLength && length > 0; ++n) {
      if (n == 1) {
        lookups += length;
        continue;
      }
      // Steps 1 .. min(max_skip_count + 1, (length - 1) / (n - 1)) fit.
      double fitting = std::floor((length - 1) / static_cast<double>(n - 1));
      double steps = std::min(static_cast<double>(maxSkipCount) + 1.0, fitting);
      lookups += static_cast<double>(n) *
                 (steps * length -
                  static_cast<double>(n - 1) * steps * (steps + 1) / 2);
    }
    if (rows * lookups > kMaxTfIdfVectorizerWork)
      return fail("expects at most ",
                  static_cast<int64_t>(kMaxTfIdfVectorizerWork),
                  " n-gram element comparisons, got about ",
                  static_cast<int64_t>(rows * lookups), " (", rows, " rows of ",
                  x.back(), " values, n-grams of ", minGramLength, " to ",
                  maxGramLength, ", max_skip_count ", maxSkipCount, ")");
  }
  result.clear();
  if (x.size() == 2)
    result.push_back(x[0]);
  result.push_back(columns);
  return Result::success();
}

Result inferTopKShape(DimsRef x, int64_t k, int64_t axis, Dims &result) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  int64_t a;
  if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
    return r;
  if (k < 0)
    return fail("expects k >= 0, got ", k);
  if (!isDynamic(x[a]) && k > x[a])
    return fail("expects k <= ", x[a], " (dimension ", a, " of x ",
                formatShape(x), "), got ", k);
  result.assign(x.begin(), x.end());
  result[a] = k;
  return Result::success();
}

} // namespace gopt::shape
