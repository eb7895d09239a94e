//===- Signal.cpp - Runtime shape functions of the signal ops -------------===//
#include "shapes/Signal.h"

#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

namespace {

Status requireFloat(DType type, const char *what) {
  if (!isFloatDType(type))
    return invalidArgument(what,
                           " must have a floating-point element type, got ",
                           dtypeName(type));
  return Status::success();
}

} // namespace

Status dftShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "input"));
  op_attrs::DftAttrs a(attrs);
  int64_t axis = 0, length = 0;
  return toStatus(shape::inferDftShape(in[0], a.axis(), a.inverse(),
                                       a.onesided(), a.dftLength(), out[0],
                                       axis, length));
}

Status stftShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "signal"));
  op_attrs::StftAttrs a(attrs);
  shape::DimsRef window;
  if (in.size() == 2)
    window = in[1];
  int64_t frameLength = 0;
  return toStatus(shape::inferStftShape(
      in[0], in.size() == 2 ? &window : nullptr, a.frameStep(), a.frameLength(),
      a.onesided(), out[0], frameLength));
}

Status melWeightMatrixShape(const OpAttrs &attrs, const Shapes &,
                            const DTypes &, Shapes &out) {
  op_attrs::MelWeightMatrixAttrs a(attrs);
  return toStatus(shape::inferMelWeightMatrixShape(
      a.numMelBins(), a.dftLength(), a.sampleRate(), a.lowerEdgeHertz(),
      a.upperEdgeHertz(), out[0]));
}

Status detShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  return toStatus(shape::inferDetShape(in[0], out[0]));
}

Status matrixInverseShape(const OpAttrs &, const Shapes &in,
                          const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  return toStatus(shape::inferMatrixInverseShape(in[0], out[0]));
}

} // namespace gopt::runtime
