//===- Image.h - Runtime shape functions of the image ops -------*- C++ -*-===//
//
// conv2d_transpose and resize (GoptImageOps.td): the op table
// (OpTable.inc) names these; the CPU kernels read the attributes through
// the same structs, so shape function and kernel agree on them.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_IMAGE_H
#define GOPT_RUNTIME_SRC_SHAPES_IMAGE_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status conv2dTransposeShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);
Status resizeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);

/// A resize's attributes as the shared shape function takes them; the
/// struct owns the lists `params` points into.
struct ResizeAttrs {
  std::vector<float> scales, roi;
  shape::Dims sizes;
  std::string mode, coordinateTransformationMode, nearestMode, dataFormat;
  float cubicCoeffA = 0, extrapolationValue = 0;
  bool excludeOutside = false, antialias = false;
  shape::ResizeParams params;

  explicit ResizeAttrs(const OpAttrs &attrs);
  ResizeAttrs(const ResizeAttrs &) = delete;
  ResizeAttrs &operator=(const ResizeAttrs &) = delete;
};

/// A conv2d_transpose's attributes.
struct Conv2DTransposeAttrs {
  std::string dataFormat, filterFormat;
  shape::Conv2DTransposeParams params;
  explicit Conv2DTransposeAttrs(const OpAttrs &attrs);
  Conv2DTransposeAttrs(const Conv2DTransposeAttrs &) = delete;
  Conv2DTransposeAttrs &operator=(const Conv2DTransposeAttrs &) = delete;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_IMAGE_H
