//===- Volume.h - Runtime shape functions of the 3-D window ops -*- C++ -*-===//
//
// conv3d, conv3d_transpose, max_pool3d and avg_pool3d (GoptVolumeOps.td):
// the op table (OpTable.inc) names the shape functions; the CPU kernels
// read the attributes through the same structs, so shape function and
// kernels agree on them.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_VOLUME_H
#define GOPT_RUNTIME_SRC_SHAPES_VOLUME_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status conv3dShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status conv3dTransposeShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);
Status pool3dShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
/// conv3d_grad: dinput and dfilter have input's and filter's shapes.
Status conv3dGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);
/// max_pool3d_grad and avg_pool3d_grad: dx has x's shape.
Status pool3dGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);

/// The window of a conv3d (kernel left empty: the filter's), max_pool3d or
/// avg_pool3d; the struct owns the padding string `window` points at.
struct VolumeWindowAttrs {
  std::string padding;
  int64_t groups = 1;           // conv3d
  bool countIncludePad = false; // avg_pool3d
  shape::VolumeWindow window;

  explicit VolumeWindowAttrs(const OpAttrs &attrs);
  VolumeWindowAttrs(const VolumeWindowAttrs &) = delete;
  VolumeWindowAttrs &operator=(const VolumeWindowAttrs &) = delete;
};

/// A conv3d_transpose's attributes.
shape::Conv3DTransposeParams conv3dTransposeParams(const OpAttrs &attrs);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_VOLUME_H
