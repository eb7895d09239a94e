//===- Logic.cpp - Runtime shape functions of GoptLogicOps.td -------------===//
//
// Adapters over gopt_shape that also check the element types, which the
// dialect states in ODS and a plan may get wrong.
//
//===----------------------------------------------------------------------===//
#include "Logic.h"

namespace gopt::runtime {

namespace {

Status requireDType(DType got, DType expected, const char *what) {
  if (got != expected)
    return invalidArgument(what, " must have element type ",
                           dtypeName(expected), ", got ", dtypeName(got));
  return Status::success();
}

} // namespace

Status compareShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

Status logicalShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  for (size_t i = 0; i < in.size(); ++i)
    GOPT_RETURN_IF_ERROR(requireDType(types[i], DType::kBool, "operand"));
  if (in.size() == 1) {
    out[0] = in[0];
    return Status::success();
  }
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

Status whereShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                  Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireDType(types[0], DType::kBool, "condition"));
  if (types[2] != types[1])
    return invalidArgument("y has element type ", dtypeName(types[2]),
                           ", x has ", dtypeName(types[1]));
  return toStatus(shape::inferWhereShape(in[0], in[1], in[2], out[0]));
}

Status modShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out) {
  int64_t fmod = attrs.getInt("fmod");
  if (fmod != 0 && fmod != 1)
    return invalidArgument("fmod must be 0 or 1, got ", fmod);
  if (types[0] == DType::kBool)
    return invalidArgument("operands must be numeric, got bool");
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

Status bitShiftShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                     Shapes &out) {
  if (!isUnsignedDType(types[0]))
    return invalidArgument("operands must be unsigned integers, got ",
                           dtypeName(types[0]));
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

Status bitwiseShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  if (isFloatDType(types[0]) || types[0] == DType::kBool)
    return invalidArgument("operands must be integers, got ",
                           dtypeName(types[0]));
  if (in.size() == 1) {
    out[0] = in[0];
    return Status::success();
  }
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

Status floatPredicateShape(const OpAttrs &, const Shapes &in,
                           const DTypes &types, Shapes &out) {
  if (!isFloatDType(types[0]))
    return invalidArgument("operand must be a float tensor, got ",
                           dtypeName(types[0]));
  out[0] = in[0];
  return Status::success();
}

Status expandShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                   Shapes &out) {
  return toStatus(
      shape::inferExpandShape(in[0], attrs.getInts("shape"), out[0]));
}

Status tileShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                 Shapes &out) {
  return toStatus(
      shape::inferTileShape(in[0], attrs.getInts("repeats"), out[0]));
}

} // namespace gopt::runtime
