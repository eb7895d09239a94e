//===- Sampling.h - Runtime shape functions of the sampling ops -*- C++ -*-===//
//
// grid_sample, roi_align, max_pool_with_indices, max_unpool and col2im
// (GoptSamplingOps.td): the op table (OpTable.inc) names the shape
// functions; the CPU kernels read the window through the same helper, so
// shape function and kernel agree on it.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_SAMPLING_H
#define GOPT_RUNTIME_SRC_SHAPES_SAMPLING_H

#include "ShapeAdapters.h"
#include "gopt/Shape/SamplingShapes.h"

namespace gopt::runtime {

Status gridSampleShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);
Status roiAlignShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out);
/// The gradients: grid_sample_grad's dx and dgrid have x's and grid's
/// shapes, roi_align_grad's dx x's; dy is checked against the forward's.
Status gridSampleGradShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out);
Status roiAlignGradShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out);
Status maxRoiPoolShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);
/// max_roi_pool_grad's dx has x's shape; dy is checked against the forward's.
Status maxRoiPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out);
Status maxPoolWithIndicesShape(const OpAttrs &attrs, const Shapes &in,
                               const DTypes &types, Shapes &out);
Status maxUnpoolShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status deformConv2dShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out);
/// deform_conv2d_grad (x, filter, offset, dy, optional mask): dx, dfilter,
/// doffset have their operands' shapes, dmask the mask's (offset's with one
/// channel per tap without one); dy is checked against the forward's.
Status deformConv2dGradShape(const OpAttrs &attrs, const Shapes &in,
                             const DTypes &types, Shapes &out);
Status col2imShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);

/// A max_pool_with_indices's window; the struct owns the padding string
/// `window` points at.
struct PoolWindowNDAttrs {
  std::string padding;
  shape::PoolWindowND window;

  explicit PoolWindowNDAttrs(const OpAttrs &attrs);
  PoolWindowNDAttrs(const PoolWindowNDAttrs &) = delete;
  PoolWindowNDAttrs &operator=(const PoolWindowNDAttrs &) = delete;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_SAMPLING_H
