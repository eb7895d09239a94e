//===- Rnn.cpp - Runtime shape functions of the recurrent ops -------------===//
#include "shapes/Rnn.h"

namespace gopt::runtime {

namespace {

/// Operands [0, floatCount) are floats of one type; operand floatCount, when
/// present, is sequence_lens. `hasCell`: lstm's initial_c and p follow
/// initial_h.
Status recurrentShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out, size_t floatCount,
                      int64_t gates, bool hasCell) {
  if (!isFloatDType(types[0]))
    return invalidArgument("x must have a floating-point element type, got ",
                           dtypeName(types[0]));
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, floatCount));
  shape::DimsRef b = in[3], initialH = in[4], initialC, peepholes, lens;
  shape::RecurrentOperands operands;
  operands.b = &b;
  operands.initialH = &initialH;
  if (hasCell) {
    initialC = in[5];
    peepholes = in[6];
    operands.initialC = &initialC;
    operands.peepholes = &peepholes;
  }
  if (in.size() > floatCount) {
    if (types[floatCount] != DType::kI32 && types[floatCount] != DType::kI64)
      return invalidArgument("sequence_lens must be i32 or i64, got ",
                             dtypeName(types[floatCount]));
    lens = in[floatCount];
    operands.sequenceLens = &lens;
  }
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferRecurrentShape(
      in[0], in[1], in[2], operands, attrs.getInt("hidden_size"),
      attrs.getString("direction"), gates, out[0], out[1])));
  if (hasCell)
    out[2] = out[1];
  return Status::success();
}

/// The gradient ops: the forward's `floatCount` operands, then
/// `gradCount` result gradients, then the optional sequence_lens. Checks
/// them as the forward does; each operand's gradient has its shape.
Status recurrentGradShape(const OpAttrs &attrs, const Shapes &in,
                          const DTypes &types, Shapes &out, size_t floatCount,
                          size_t gradCount, int64_t gates, bool hasCell) {
  Shapes forwardIn(in.begin(), in.begin() + floatCount);
  DTypes forwardTypes(types.begin(), types.begin() + floatCount);
  if (in.size() > floatCount + gradCount) {
    forwardIn.push_back(in.back());
    forwardTypes.push_back(types.back());
  }
  Shapes forwardOut(hasCell ? 3 : 2);
  GOPT_RETURN_IF_ERROR(recurrentShape(attrs, forwardIn, forwardTypes,
                                      forwardOut, floatCount, gates, hasCell));
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, floatCount + gradCount));
  std::vector<shape::DimsRef> stateGrads;
  for (size_t i = 1; i < gradCount; ++i)
    stateGrads.push_back(in[floatCount + i]);
  GOPT_RETURN_IF_ERROR(toStatus(shape::checkRecurrentResultGrads(
      forwardOut[0], forwardOut[1], in[floatCount], stateGrads)));
  for (size_t i = 0; i < floatCount; ++i)
    out[i] = in[i];
  return Status::success();
}

} // namespace

Status lstmShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out) {
  return recurrentShape(attrs, in, types, out, 7, 4, /*hasCell=*/true);
}

Status gruShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out) {
  return recurrentShape(attrs, in, types, out, 5, 3, /*hasCell=*/false);
}

Status rnnShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out) {
  return recurrentShape(attrs, in, types, out, 5, 1, /*hasCell=*/false);
}

Status lstmGradShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out) {
  return recurrentGradShape(attrs, in, types, out, 7, 3, 4, /*hasCell=*/true);
}

Status gruGradShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  return recurrentGradShape(attrs, in, types, out, 5, 2, 3, /*hasCell=*/false);
}

Status rnnGradShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  return recurrentGradShape(attrs, in, types, out, 5, 2, 1, /*hasCell=*/false);
}

} // namespace gopt::runtime
