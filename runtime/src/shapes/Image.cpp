//===- Image.cpp - Runtime shape functions of the image ops ---------------===//
#include "shapes/Image.h"

#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

ResizeAttrs::ResizeAttrs(const OpAttrs &attrs) {
  op_attrs::ResizeAttrs a(attrs);
  mode = a.mode();
  coordinateTransformationMode = a.coordinateTransformationMode();
  nearestMode = a.nearestMode();
  dataFormat = a.dataFormat();
  cubicCoeffA = static_cast<float>(a.cubicCoeffA());
  extrapolationValue = static_cast<float>(a.extrapolationValue());
  excludeOutside = a.excludeOutside();
  antialias = a.antialias();
  params.mode = mode;
  params.coordinateTransformationMode = coordinateTransformationMode;
  params.nearestMode = nearestMode;
  params.dataFormat = dataFormat;
  if (a.hasScales()) {
    for (double s : attrs.getFloats("scales"))
      scales.push_back(static_cast<float>(s));
    params.scales = &scales;
  }
  if (a.hasSizes()) {
    sizes = attrs.getInts("sizes");
    params.sizes = &sizes;
  }
  if (a.hasRoi()) {
    for (double r : attrs.getFloats("roi"))
      roi.push_back(static_cast<float>(r));
    params.roi = &roi;
  }
}

Conv2DTransposeAttrs::Conv2DTransposeAttrs(const OpAttrs &attrs) {
  op_attrs::Conv2DTransposeAttrs a(attrs);
  dataFormat = a.dataFormat();
  filterFormat = a.filterFormat();
  params.strides = a.strides();
  params.dilations = a.dilations();
  params.pads = a.pads();
  params.outputPadding = a.outputPadding();
  params.groups = a.groups();
  params.dataFormat = dataFormat;
  params.filterFormat = filterFormat;
}

Status conv2dTransposeShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  if (!isFloatDType(types[0]))
    return invalidArgument("input must have a floating-point element type, "
                           "got ",
                           dtypeName(types[0]));
  Conv2DTransposeAttrs a(attrs);
  shape::DimsRef bias;
  if (in.size() == 3)
    bias = in[2];
  return toStatus(shape::inferConv2DTransposeShape(
      in[0], in[1], in.size() == 3 ? &bias : nullptr, a.params, out[0]));
}

Status resizeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  if (!isFloatDType(types[0]))
    return invalidArgument("input must have a floating-point element type, "
                           "got ",
                           dtypeName(types[0]));
  ResizeAttrs a(attrs);
  return toStatus(shape::inferResizeShape(in[0], a.params, out[0]));
}

} // namespace gopt::runtime
