//===- Failure.h - Failure messages of the shape functions ------*- C++ -*-===//
//
// Internal to lib/Shape: every shape-function file builds its failures the
// same way.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_SHAPE_FAILURE_H
#define GOPT_LIB_SHAPE_FAILURE_H

#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>
#include <string_view>

namespace gopt::shape::detail {

/// A failed Result whose message is `args` streamed one after another.
template <typename... Args> Result fail(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return Result::failure(os.str());
}

/// Fails unless `values` (a window attribute, say) has `n` entries.
inline Result requireSize(DimsRef values, size_t n, std::string_view name) {
  if (values.size() != n)
    return fail("expects ", name, " of ", n, " entries, got ",
                formatList(values));
  return Result::success();
}

} // namespace gopt::shape::detail

#endif // GOPT_LIB_SHAPE_FAILURE_H
