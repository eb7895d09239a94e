//===- Sampling.cpp - Runtime shape functions of the sampling ops ---------===//
#include "shapes/Sampling.h"

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

Status requireI64(DType type, const char *what) {
  if (type != DType::kI64)
    return invalidArgument(what, " must have element type i64, got ",
                           dtypeName(type));
  return Status::success();
}

} // namespace

PoolWindowNDAttrs::PoolWindowNDAttrs(const OpAttrs &attrs) {
  op_attrs::MaxPoolWithIndicesAttrs a(attrs);
  padding = a.padding();
  window.kernel = a.kernel();
  window.strides = a.strides();
  window.dilations = a.dilations();
  window.pads = a.pads();
  window.ceilMode = a.ceilMode();
  window.padding = padding;
}

Status gridSampleShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  op_attrs::GridSampleAttrs a(attrs);
  return toStatus(shape::inferGridSampleShape(
      in[0], in[1], a.mode(), a.paddingMode(), a.alignCorners(), out[0]));
}

Status gridSampleGradShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 3));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  op_attrs::GridSampleGradAttrs a(attrs);
  shape::Dims y;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferGridSampleShape(
      in[0], in[1], a.mode(), a.paddingMode(), a.alignCorners(), y)));
  GOPT_RETURN_IF_ERROR(toStatus(shape::checkForwardResultGrad(y, in[2])));
  out[0] = in[0];
  out[1] = in[1];
  return Status::success();
}

Status roiAlignGradShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out) {
  if (types[3] != types[0])
    return invalidArgument("dy has element type ", dtypeName(types[3]),
                           ", x has ", dtypeName(types[0]));
  Shapes forwardOut(1);
  GOPT_RETURN_IF_ERROR(roiAlignShape(attrs, Shapes(in.begin(), in.begin() + 3),
                                     DTypes(types.begin(), types.begin() + 3),
                                     forwardOut));
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::checkForwardResultGrad(forwardOut[0], in[3])));
  out[0] = in[0];
  return Status::success();
}

Status roiAlignShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireI64(types[2], "batch_indices"));
  op_attrs::RoiAlignAttrs a(attrs);
  std::string mode = a.mode(),
              coordinateMode = a.coordinateTransformationMode();
  shape::RoiAlignParams params;
  params.mode = mode;
  params.coordinateMode = coordinateMode;
  params.outputHeight = a.outputHeight();
  params.outputWidth = a.outputWidth();
  params.samplingRatio = a.samplingRatio();
  return toStatus(
      shape::inferRoiAlignShape(in[0], in[1], in[2], params, out[0]));
}

Status maxRoiPoolShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  op_attrs::MaxRoiPoolAttrs a(attrs);
  return toStatus(shape::inferMaxRoiPoolShape(in[0], in[1], a.pooledShape(),
                                              a.spatialScale(), out[0]));
}

Status maxRoiPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 3));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  op_attrs::MaxRoiPoolGradAttrs a(attrs);
  shape::Dims y;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferMaxRoiPoolShape(
      in[0], in[1], a.pooledShape(), a.spatialScale(), y)));
  GOPT_RETURN_IF_ERROR(toStatus(shape::checkForwardResultGrad(y, in[2])));
  out[0] = in[0];
  return Status::success();
}

Status maxPoolWithIndicesShape(const OpAttrs &attrs, const Shapes &in,
                               const DTypes &types, Shapes &out) {
  if (types[0] == DType::kBool)
    return invalidArgument("x must have a numeric element type, got bool");
  PoolWindowNDAttrs a(attrs);
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferMaxPoolWithIndicesShape(
      in[0], a.window, op_attrs::MaxPoolWithIndicesAttrs(attrs).storageOrder(),
      out[0])));
  out[1] = out[0];
  return Status::success();
}

Status maxUnpoolShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireI64(types[1], "indices"));
  op_attrs::MaxUnpoolAttrs a(attrs);
  std::vector<int64_t> kernel = a.kernel(), strides = a.strides(),
                       pads = a.pads(), outputShape = a.outputShape({});
  shape::DimsRef given(outputShape);
  return toStatus(shape::inferMaxUnpoolShape(
      in[0], in[1], kernel, strides, pads,
      a.hasOutputShape() ? &given : nullptr, out[0]));
}

Status col2imShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  op_attrs::Col2ImAttrs a(attrs);
  return toStatus(shape::inferCol2ImShape(in[0], a.imageShape(), a.blockShape(),
                                          a.strides(), a.dilations(), a.pads(),
                                          out[0]));
}

Status deformConv2dShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  op_attrs::DeformConv2DAttrs a(attrs);
  std::vector<int64_t> strides = a.strides(), dilations = a.dilations(),
                       pads = a.pads();
  shape::DeformConvParams params;
  params.strides = strides;
  params.dilations = dilations;
  params.pads = pads;
  params.group = a.group();
  params.offsetGroup = a.offsetGroup();
  shape::DimsRef mask;
  if (in.size() == 5)
    mask = in[4];
  return toStatus(shape::inferDeformConvShape(in[0], in[1], in[2], in[3],
                                              in.size() == 5 ? &mask : nullptr,
                                              params, out[0]));
}

Status deformConv2dGradShape(const OpAttrs &attrs, const Shapes &in,
                             const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  op_attrs::DeformConv2DGradAttrs a(attrs);
  std::vector<int64_t> strides = a.strides(), dilations = a.dilations(),
                       pads = a.pads();
  shape::DeformConvParams params;
  params.strides = strides;
  params.dilations = dilations;
  params.pads = pads;
  params.group = a.group();
  params.offsetGroup = a.offsetGroup();
  shape::DimsRef mask;
  if (in.size() == 5)
    mask = in[4];
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferDeformConvGradShape(
      in[0], in[1], in[2], in[3], in.size() == 5 ? &mask : nullptr, params,
      out[3])));
  out[0] = in[0];
  out[1] = in[1];
  out[2] = in[2];
  return Status::success();
}

} // namespace gopt::runtime
