//===- Collective.cpp - Runtime shape functions of GoptCollectiveOps.td ---===//
#include "Collective.h"

namespace gopt::runtime {

Status allReduceShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                      Shapes &out) {
  if (in.empty()) // as the dialect's verifier says
    return invalidArgument("all_reduce expects at least one operand");
  if (out.size() != in.size())
    return invalidArgument("all_reduce has ", in.size(), " operands but ",
                           out.size(), " results; it needs one per operand");
  for (size_t i = 0; i < in.size(); ++i) {
    if (!isFloatDType(types[i]))
      return invalidArgument("all_reduce operand ", i, " ",
                             shapeToString(in[i]),
                             " must have a floating-point element type, got ",
                             dtypeName(types[i]));
    out[i] = in[i];
  }
  return Status::success();
}

} // namespace gopt::runtime
