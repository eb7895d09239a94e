//===- SamplingShapes.h - Shape functions of the sampling ops ---*- C++ -*-===//
//
// grid_sample, roi_align, max_pool_with_indices, max_unpool and col2im
// (GoptSamplingOps.td; lib/Shape/SamplingShapes.cpp). Kept apart from
// ShapeFunctions.h, whose conventions they follow, so that the family's
// declarations live together.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_SHAPE_SAMPLINGSHAPES_H
#define GOPT_SHAPE_SAMPLINGSHAPES_H

#include "gopt/Shape/ShapeFunctions.h"

namespace gopt::shape {

/// The spatial dimensions gopt.grid_sample takes (1-D, 2-D, 3-D).
constexpr int kMaxGridSampleDims = 3;

/// gopt.grid_sample: x [N, C, D1, ..., Dr], grid [N, O1, ..., Or, r] ->
/// [N, C, O1, ..., Or], r from 1 to kMaxGridSampleDims.
Result inferGridSampleShape(DimsRef x, DimsRef grid, std::string_view mode,
                            std::string_view paddingMode, int64_t alignCorners,
                            Dims &result);

/// gopt.roi_align's attributes.
struct RoiAlignParams {
  std::string_view mode;           // "avg" or "max"
  std::string_view coordinateMode; // "half_pixel" or "output_half_pixel"
  int64_t outputHeight = 1;
  int64_t outputWidth = 1;
  int64_t samplingRatio = 0;
};

/// gopt.roi_align: x [N, C, H, W], rois [R, 4], batchIndices [R] ->
/// [R, C, output_height, output_width].
Result inferRoiAlignShape(DimsRef x, DimsRef rois, DimsRef batchIndices,
                          const RoiAlignParams &params, Dims &result);

/// gopt.max_roi_pool: x [N, C, H, W], rois [R, 5] -> [R, C, PH, PW] for
/// pooled_shape [PH, PW] (each at least 1; spatial_scale finite and
/// positive).
Result inferMaxRoiPoolShape(DimsRef x, DimsRef rois, DimsRef pooledShape,
                            float spatialScale, Dims &result);

/// A pooling window over the k = 1..3 spatial dims of [N, C, spatial...].
struct PoolWindowND {
  Dims kernel;              // k entries
  Dims strides;             // k entries
  Dims dilations;           // k entries
  std::string_view padding; // "EXPLICIT", "SAME" or "VALID"
  Dims pads;                // (before, after) per spatial dim: 2k entries
  bool ceilMode = false;
};

/// Checks the window against `input` and resolves each spatial dim with
/// computeWindowDim; `dims` gets one entry per spatial dim. Used by the shape
/// function and the kernel alike.
Result resolvePoolWindowND(DimsRef input, const PoolWindowND &window,
                           std::vector<WindowDim> &dims);

/// gopt.max_pool_with_indices: both results have shape `result`.
Result inferMaxPoolWithIndicesShape(DimsRef x, const PoolWindowND &window,
                                    int64_t storageOrder, Dims &result);

/// gopt.max_unpool: x and indices [N, C, spatial...] of one shape;
/// `outputShape` null when absent.
Result inferMaxUnpoolShape(DimsRef x, DimsRef indices, DimsRef kernel,
                           DimsRef strides, DimsRef pads,
                           const DimsRef *outputShape, Dims &result);

/// gopt.col2im: x [N, C * prod(block), L] -> [N, C, image...]; `blocks`,
/// when given, receives the blocks' grid (positions per spatial dim).
Result inferCol2ImShape(DimsRef x, DimsRef imageShape, DimsRef blockShape,
                        DimsRef strides, DimsRef dilations, DimsRef pads,
                        Dims &result, Dims *blocks = nullptr);

/// gopt.deform_conv2d's attributes.
struct DeformConvParams {
  DimsRef strides, dilations, pads; // pads: top, bottom, left, right
  int64_t group = 1, offsetGroup = 1;
};

/// gopt.deform_conv2d: x [N, C, H, W], filter [Cout, C / group, KH, KW],
/// offset [N, offset_group * 2 * KH * KW, Ho, Wo], bias [Cout], mask (null
/// when absent) [N, offset_group * KH * KW, Ho, Wo] -> [N, Cout, Ho, Wo].
Result inferDeformConvShape(DimsRef x, DimsRef filter, DimsRef offset,
                            DimsRef bias, const DimsRef *mask,
                            const DeformConvParams &params, Dims &result);

/// gopt.deform_conv2d_grad: dy checked against the forward's result (for
/// the same x, filter, offset and mask); `dmask` gets the mask's shape,
/// or without one offset's with one channel per tap. dx, dfilter and
/// doffset have their operands' shapes.
Result inferDeformConvGradShape(DimsRef x, DimsRef filter, DimsRef offset,
                                DimsRef dy, const DimsRef *mask,
                                const DeformConvParams &params, Dims &dmask);

} // namespace gopt::shape

#endif // GOPT_SHAPE_SAMPLINGSHAPES_H
