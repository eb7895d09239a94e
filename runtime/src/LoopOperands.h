//===- LoopOperands.h - How a loop op's operands split ----------*- C++ -*-===//
//
// gopt.loop takes (max_trip_count, cond, carried..., captures...). ODS keeps
// the split in the op's operand segments (AttrSizedOperandSegments), which
// the generated op table makes a required plan attribute; the session and
// the loop kernel both read it here.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_LOOPOPERANDS_H
#define GOPT_RUNTIME_SRC_LOOPOPERANDS_H

#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

// The number of carried values of loop `op`, or -1 when its segments do not
// describe its operands (a malformed plan).
inline int64_t loopCarriedCount(const plan::Op &op) {
  std::vector<int64_t> segments = op_attrs::LoopAttrs(op).operandSegmentSizes();
  if (segments.size() != 4 || segments[0] != 1 || segments[1] != 1 ||
      segments[2] < 0 || segments[3] < 0 ||
      2 + segments[2] + segments[3] != op.inputs_size())
    return -1;
  return segments[2];
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_LOOPOPERANDS_H
