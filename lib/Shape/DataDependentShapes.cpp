//===- DataDependentShapes.cpp - Bounds of results shaped by data ---------===//
//
// non_zero, compress, unique and non_max_suppression
// (GoptDataDependentOps.td): upper bounds of their result shapes, following
// docs/op-semantics.md. No LLVM or MLIR: the runtime-only build compiles this
// file too.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <algorithm>

namespace gopt::shape {

using detail::fail;

namespace {

// The element count, dynamic when any dimension is.
int64_t elementCount(DimsRef x) {
  int64_t n = 1;
  for (int64_t d : x) {
    if (isDynamic(d))
      return kDynamic;
    n *= d;
  }
  return n;
}

int64_t minDim(int64_t a, int64_t b) {
  if (isDynamic(a))
    return b;
  if (isDynamic(b))
    return a;
  return std::min(a, b);
}

Result requireOneElement(DimsRef v, const char *name) {
  int64_t n = elementCount(v);
  if (v.size() > 1 || (!isDynamic(n) && n != 1))
    return fail("expects ", name, " of one element (shape [] or [1]), got ",
                formatShape(v));
  return Result::success();
}

} // namespace

Result inferNonZeroShape(DimsRef x, Dims &bound) {
  if (x.empty())
    return fail("expects x of rank >= 1, got a scalar");
  bound = {static_cast<int64_t>(x.size()), elementCount(x)};
  return Result::success();
}

Result inferImageDecoderShape(DimsRef stream, int64_t channels, Dims &shape) {
  if (stream.size() != 1)
    return fail("expects encoded_stream of rank 1 (the file's bytes), got ",
                formatShape(stream));
  shape = {kDynamic, kDynamic, channels};
  return Result::success();
}

Result inferCompressShape(DimsRef x, DimsRef condition, bool hasAxis,
                          int64_t axis, Dims &bound, int64_t &countedDim) {
  if (condition.size() != 1)
    return fail("expects a condition of rank 1, got ", formatShape(condition));
  if (!hasAxis) {
    bound = {minDim(elementCount(x), condition[0])};
    countedDim = 0;
    return Result::success();
  }
  int64_t a;
  if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
    return r;
  if (!isDynamic(x[a]) && !isDynamic(condition[0]) && condition[0] > x[a])
    return fail("expects a condition of at most ", x[a], " entries (dimension ",
                a, " of x ", formatShape(x), "), got ", condition[0]);
  bound.assign(x.begin(), x.end());
  bound[a] = minDim(x[a], condition[0]);
  countedDim = a;
  return Result::success();
}

Result inferUniqueShape(DimsRef x, bool hasAxis, int64_t axis, Dims &y,
                        Dims &indices, Dims &inverseIndices, Dims &counts,
                        int64_t &countedDim) {
  int64_t entries;
  if (hasAxis) {
    int64_t a;
    if (Result r = normalizeAxis(axis, x.size(), "axis", a); r.failed())
      return r;
    y.assign(x.begin(), x.end());
    entries = x[a];
    countedDim = a;
  } else {
    entries = elementCount(x);
    y = {entries};
    countedDim = 0;
  }
  indices = inverseIndices = counts = {entries};
  return Result::success();
}

Result inferNonMaxSuppressionShape(DimsRef boxes, DimsRef scores,
                                   DimsRef maxOutput, DimsRef iouThreshold,
                                   DimsRef scoreThreshold, Dims &bound) {
  if (boxes.size() != 3 || (!isDynamic(boxes[2]) && boxes[2] != 4))
    return fail("expects boxes of shape [batches, boxes, 4], got ",
                formatShape(boxes));
  if (scores.size() != 3)
    return fail("expects scores of shape [batches, classes, boxes], got ",
                formatShape(scores));
  for (int d : {0, 1}) {
    int64_t b = boxes[d], s = scores[d == 0 ? 0 : 2];
    if (!isDynamic(b) && !isDynamic(s) && b != s)
      return fail("expects boxes ", formatShape(boxes), " and scores ",
                  formatShape(scores), " to agree in the ",
                  d == 0 ? "batch count" : "box count");
  }
  if (Result r = requireOneElement(maxOutput, "max_output_boxes_per_class");
      r.failed())
    return r;
  if (Result r = requireOneElement(iouThreshold, "iou_threshold"); r.failed())
    return r;
  if (Result r = requireOneElement(scoreThreshold, "score_threshold");
      r.failed())
    return r;
  int64_t rows = elementCount(scores);
  bound = {rows, 3};
  return Result::success();
}

} // namespace gopt::shape
