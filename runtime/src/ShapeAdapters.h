//===- ShapeAdapters.h - Helpers for runtime shape functions ---*- C++ -*-===//
//
// What every runtime shape function (the ones OpTable.inc names) shares: the
// signature's vector types, turning a gopt_shape failure into a Status, and
// the operand checks that only the runtime makes (the dialect's are in ODS).
// Shape functions for a family of ops live in a file of their own under
// runtime/src/shapes/ and are declared in its header, which OpSchema.cpp
// includes (outside any namespace) for the generated table to name them.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPEADAPTERS_H
#define GOPT_RUNTIME_SRC_SHAPEADAPTERS_H

#include "gopt/Shape/ShapeFunctions.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <vector>

namespace gopt::runtime {

using Shapes = std::vector<Shape>;
using DTypes = std::vector<DType>;

/// A shared shape function's failure as an invalid-argument Status; the
/// session prefixes it with the op.
inline Status toStatus(const shape::Result &result) {
  if (result.ok())
    return Status::success();
  return invalidArgument(result.message());
}

inline Status requireSameTypes(const DTypes &types, size_t count) {
  for (size_t i = 1; i < std::min(count, types.size()); ++i)
    if (types[i] != types[0])
      return invalidArgument("operand ", i, " has element type ",
                             dtypeName(types[i]), ", operand 0 has ",
                             dtypeName(types[0]));
  return Status::success();
}

inline Status requireRank(const Shape &s, int64_t rank, const char *what) {
  if (static_cast<int64_t>(s.size()) != rank)
    return invalidArgument(what, " must have rank ", rank, ", got ",
                           shapeToString(s));
  return Status::success();
}

inline StatusOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                       const char *what = "axis") {
  if (axis < -rank || axis >= rank)
    return invalidArgument(what, " ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

inline Status requireListSize(const std::vector<int64_t> &v, size_t n,
                              const char *name) {
  if (v.size() != n)
    return invalidArgument("'", name, "' must have ", n, " entries, got ",
                           v.size());
  return Status::success();
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPEADAPTERS_H
