//===- DynamicShape.cpp - Runtime shapes computed in the graph ------------===//
#include "shapes/DynamicShape.h"

#include "gopt/Shape/DynamicOps.h"
#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

Status
dynamicReshapeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    const std::vector<const std::vector<int64_t> *> &hostValues,
                    Shapes &out) {
  if (types[1] != DType::kI64)
    return invalidArgument("the target shape must be i64, got ",
                           dtypeName(types[1]));
  GOPT_RETURN_IF_ERROR(requireRank(in[1], 1, "the target shape"));
  if (!hostValues[1])
    return failedPrecondition("the target shape's value is not computed");
  op_attrs::DynamicReshapeAttrs a(attrs);
  return toStatus(shape::inferDynamicReshapeShape(in[0], *hostValues[1],
                                                  a.allowZero(), out[0]));
}

Status rangeShape(const OpAttrs &attrs, const Shapes &, const DTypes &,
                  Shapes &out) {
  op_attrs::RangeAttrs a(attrs);
  return toStatus(
      shape::inferRangeShape(a.start(), a.limit(), a.delta(), out[0]));
}

} // namespace gopt::runtime
