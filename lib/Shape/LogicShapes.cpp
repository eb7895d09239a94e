//===- LogicShapes.cpp - Shapes of where, expand and tile -----------------===//
//
// The shape functions of GoptLogicOps.td that numpy broadcasting alone does
// not give (comparisons and logical ops use inferBroadcastShape).
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>

namespace gopt::shape {

using detail::fail;

Result inferWhereShape(DimsRef condition, DimsRef x, DimsRef y, Dims &result) {
  Dims values;
  if (Result r = inferBroadcastShape(x, y, values); r.failed())
    return fail("x and y: ", r.message());
  if (Result r = inferBroadcastShape(condition, values, result); r.failed())
    return fail("condition and values: ", r.message());
  return Result::success();
}

Result inferExpandShape(DimsRef input, DimsRef shape, Dims &result) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return fail("expects a non-negative target shape, got ",
                  formatList(shape));
  return inferBroadcastShape(input, shape, result);
}

Result inferTileShape(DimsRef input, DimsRef repeats, Dims &result) {
  if (repeats.size() != input.size())
    return fail("expects one repeat per dimension of the input ",
                formatShape(input), ", got repeats ", formatList(repeats));
  Dims out(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    if (repeats[i] < 0)
      return fail("expects non-negative repeats, got ", formatList(repeats));
    out[i] = isDynamic(input[i]) ? (repeats[i] == 0 ? 0 : kDynamic)
                                 : input[i] * repeats[i];
  }
  result = std::move(out);
  return Result::success();
}

} // namespace gopt::shape
