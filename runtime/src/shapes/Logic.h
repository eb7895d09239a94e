//===- Logic.h - Runtime shape functions of GoptLogicOps.td ----*- C++ -*-===//
//
// Comparisons, logical ops, where, mod, float predicates, expand and tile.
// OpSchema.cpp includes this header before the generated op table, which
// names these functions.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_LOGIC_H
#define GOPT_RUNTIME_SRC_SHAPES_LOGIC_H

#include "../ShapeAdapters.h"

namespace gopt::runtime {

/// equal, less, ...: operands of one element type, broadcast; an i1 result.
Status compareShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out);
/// and, or, xor, not: i1 operands, broadcast.
Status logicalShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out);
/// where: an i1 condition, x and y of one element type, all broadcast.
Status whereShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                  Shapes &out);
/// mod: numeric operands of one element type, broadcast; fmod 0 or 1.
Status modShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);
/// bitwise_and, _or, _xor (broadcast) and bitwise_not: integer operands of
/// one element type.
Status bitwiseShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out);
/// bit_shift: unsigned operands of one element type, broadcast.
Status bitShiftShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                     Shapes &out);
/// is_nan, is_inf: a float operand; an i1 result of its shape.
Status floatPredicateShape(const OpAttrs &, const Shapes &in,
                           const DTypes &types, Shapes &out);
Status expandShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status tileShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_LOGIC_H
