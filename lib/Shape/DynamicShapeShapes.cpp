//===- DynamicShapeShapes.cpp - Shapes computed at run time ---------------===//
//
// gopt.dynamic_reshape (GoptDynamicShapeOps.td), following
// docs/op-semantics.md. No LLVM or MLIR, as ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>

namespace gopt::shape {

using detail::fail;

Result inferDynamicReshapeShape(DimsRef input, DimsRef target, bool allowZero,
                                Dims &result) {
  result.assign(target.begin(), target.end());
  int64_t inferred = -1;
  bool dynamic = false;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t dim = target[i];
    if (dim == -1) {
      if (inferred >= 0)
        return fail("expects at most one -1 in the target shape, got ",
                    formatList(target));
      inferred = i;
      continue;
    }
    if (dim < 0)
      return fail("expects target shape entries >= -1, got ",
                  formatList(target));
    if (dim == 0 && !allowZero) {
      if (i >= input.size())
        return fail("target shape ", formatList(target), " copies dimension ",
                    i, ", which the operand ", formatShape(input), " lacks");
      result[i] = input[i];
    }
    if (isDynamic(result[i]))
      dynamic = true;
    else
      known *= result[i];
  }
  int64_t count = 1;
  for (int64_t dim : input) {
    if (isDynamic(dim))
      dynamic = true;
    else
      count *= dim;
  }
  if (inferred >= 0) {
    if (dynamic) {
      result[inferred] = kDynamic;
      return Result::success();
    }
    if (known == 0 || count % known != 0)
      return fail("cannot reshape ", formatShape(input), " (", count,
                  " elements) to ", formatList(target),
                  ": the entries other than -1 hold ", known,
                  " elements, which do not divide ", count);
    result[inferred] = count / known;
    return Result::success();
  }
  if (!dynamic && count != known)
    return fail("cannot reshape ", formatShape(input), " (", count,
                " elements) to ", formatList(target), " (", known,
                " elements)");
  return Result::success();
}

} // namespace gopt::shape
