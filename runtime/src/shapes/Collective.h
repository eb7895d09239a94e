//===- Collective.h - Runtime shape functions of GoptCollectiveOps.td -*- C++
//-*-===//
//
// all_reduce. OpSchema.cpp includes this header before the generated op
// table, which names these functions.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_COLLECTIVE_H
#define GOPT_RUNTIME_SRC_SHAPES_COLLECTIVE_H

#include "../ShapeAdapters.h"

namespace gopt::runtime {

/// all_reduce: one result per operand, of its shape (and element type, which
/// the plan states: resultElementType "any"); float operands only.
Status allReduceShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                      Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_COLLECTIVE_H
