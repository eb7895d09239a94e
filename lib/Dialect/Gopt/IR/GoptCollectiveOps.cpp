//===- GoptCollectiveOps.cpp - shape functions of GoptCollectiveOps.td ----===//
//
// all_reduce: each result has its operand's type. Nothing to compute, so
// there is no shared shape function in gopt/Shape; the runtime's
// allReduceShape checks the same rule on concrete shapes.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <>
unsigned getExpectedResultCount<AllReduceOp>(AllReduceOp::Adaptor adaptor) {
  return std::max<size_t>(1, adaptor.getInputs().size());
}
} // namespace gopt::detail

static LogicalResult inferTypes(AllReduceOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return error("expects at least one operand (a bucket of tensors)");
  StringRef reduction = adaptor.getReduction();
  if (reduction != "sum" && reduction != "mean")
    return error("expects reduction \"sum\" or \"mean\", got \"", reduction,
                 "\"");
  for (Value input : adaptor.getInputs())
    inferred.push_back(input.getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(AllReduceOp)
