//===- Volume.cpp - Runtime shape functions of the 3-D window ops ---------===//
#include "shapes/Volume.h"

#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

namespace {

Status requireFloatInput(const DTypes &types) {
  if (!isFloatDType(types[0]))
    return invalidArgument("input must have a floating-point element type, "
                           "got ",
                           dtypeName(types[0]));
  return Status::success();
}

} // namespace

VolumeWindowAttrs::VolumeWindowAttrs(const OpAttrs &attrs) {
  // The three ops share these names; one an op does not declare (conv3d's
  // kernel and ceil_mode, the pools' groups) reads as the default the
  // declaring ops agree on, or empty.
  padding = attrs.getString("padding");
  groups = attrs.getInt("groups");
  countIncludePad = attrs.getBool("count_include_pad");
  window.kernel = attrs.getInts("kernel");
  window.strides = attrs.getInts("strides");
  window.dilations = attrs.getInts("dilations");
  window.pads = attrs.getInts("pads");
  window.ceilMode = attrs.getBool("ceil_mode");
  window.padding = padding;
}

shape::Conv3DTransposeParams conv3dTransposeParams(const OpAttrs &attrs) {
  op_attrs::Conv3DTransposeAttrs a(attrs);
  shape::Conv3DTransposeParams params;
  params.strides = a.strides();
  params.dilations = a.dilations();
  params.pads = a.pads();
  params.outputPadding = a.outputPadding();
  params.groups = a.groups();
  return params;
}

Status conv3dShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  GOPT_RETURN_IF_ERROR(requireFloatInput(types));
  VolumeWindowAttrs a(attrs);
  shape::DimsRef bias;
  if (in.size() == 3)
    bias = in[2];
  return toStatus(shape::inferConv3DShape(in[0], in[1],
                                          in.size() == 3 ? &bias : nullptr,
                                          a.window, a.groups, out[0]));
}

Status conv3dTransposeShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  GOPT_RETURN_IF_ERROR(requireFloatInput(types));
  shape::DimsRef bias;
  if (in.size() == 3)
    bias = in[2];
  return toStatus(shape::inferConv3DTransposeShape(
      in[0], in[1], in.size() == 3 ? &bias : nullptr,
      conv3dTransposeParams(attrs), out[0]));
}

Status pool3dShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloatInput(types));
  VolumeWindowAttrs a(attrs);
  return toStatus(shape::inferPool3DShape(in[0], a.window, out[0]));
}

Status conv3dGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  GOPT_RETURN_IF_ERROR(requireFloatInput(types));
  VolumeWindowAttrs a(attrs);
  shape::Dims y;
  GOPT_RETURN_IF_ERROR(toStatus(
      shape::inferConv3DShape(in[0], in[1], nullptr, a.window, a.groups, y)));
  GOPT_RETURN_IF_ERROR(toStatus(shape::checkForwardResultGrad(y, in[2])));
  out[0] = in[0];
  out[1] = in[1];
  return Status::success();
}

Status pool3dGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  GOPT_RETURN_IF_ERROR(requireFloatInput(types));
  VolumeWindowAttrs a(attrs);
  shape::Dims y;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferPool3DShape(in[0], a.window, y)));
  GOPT_RETURN_IF_ERROR(toStatus(shape::checkForwardResultGrad(y, in[1])));
  out[0] = in[0];
  return Status::success();
}

} // namespace gopt::runtime
