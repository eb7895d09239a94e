//===- GoptSamplingOps.cpp - type inference of the sampling ops -----------===//
//
// grid_sample, roi_align (and their gradients), max_pool_with_indices,
// max_unpool, col2im and deform_conv2d (and its gradient) (GoptSamplingOps.td):
// MLIR adapters over the shared shape functions in
// lib/Shape/SamplingShapes.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"
#include "gopt/Shape/SamplingShapes.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <>
unsigned
getExpectedResultCount<MaxPoolWithIndicesOp>(MaxPoolWithIndicesOp::Adaptor) {
  return 2;
}
template <>
unsigned getExpectedResultCount<GridSampleGradOp>(GridSampleGradOp::Adaptor) {
  return 2;
}
template <>
unsigned
getExpectedResultCount<DeformConv2DGradOp>(DeformConv2DGradOp::Adaptor) {
  return 4;
}
} // namespace gopt::detail

static LogicalResult inferTypes(GridSampleOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getGrid()},
                                    {"x", "grid"}, error)))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferGridSampleShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getGrid()),
          adaptor.getMode(), adaptor.getPaddingMode(),
          static_cast<int64_t>(adaptor.getAlignCorners()), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(GridSampleOp)

static LogicalResult inferTypes(RoiAlignOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getRois()},
                                    {"x", "rois"}, error)))
    return failure();
  shape::RoiAlignParams params;
  params.mode = adaptor.getMode();
  params.coordinateMode = adaptor.getCoordinateTransformationMode();
  params.outputHeight = static_cast<int64_t>(adaptor.getOutputHeight());
  params.outputWidth = static_cast<int64_t>(adaptor.getOutputWidth());
  params.samplingRatio = static_cast<int64_t>(adaptor.getSamplingRatio());
  shape::Dims result;
  if (failed(error.check(shape::inferRoiAlignShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getRois()),
          shapeOf(adaptor.getBatchIndices()), params, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(RoiAlignOp)

static LogicalResult inferTypes(MaxRoiPoolOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getRois()},
                                    {"x", "rois"}, error)))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferMaxRoiPoolShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getRois()),
          adaptor.getPooledShape(), adaptor.getSpatialScale().convertToFloat(),
          result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxRoiPoolOp)

static LogicalResult inferTypes(MaxRoiPoolGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes(
          {adaptor.getX(), adaptor.getRois(), adaptor.getDy()},
          {"x", "rois", "dy"}, error)))
    return failure();
  shape::Dims y;
  if (failed(error.check(shape::inferMaxRoiPoolShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getRois()),
          adaptor.getPooledShape(), adaptor.getSpatialScale().convertToFloat(),
          y))) ||
      failed(error.check(
          shape::checkForwardResultGrad(y, shapeOf(adaptor.getDy())))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxRoiPoolGradOp)

static LogicalResult inferTypes(GridSampleGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes(
          {adaptor.getX(), adaptor.getGrid(), adaptor.getDy()},
          {"x", "grid", "dy"}, error)))
    return failure();
  shape::Dims y;
  if (failed(error.check(shape::inferGridSampleShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getGrid()),
          adaptor.getMode(), adaptor.getPaddingMode(),
          static_cast<int64_t>(adaptor.getAlignCorners()), y))) ||
      failed(error.check(
          shape::checkForwardResultGrad(y, shapeOf(adaptor.getDy())))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  inferred.push_back(adaptor.getGrid().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(GridSampleGradOp)

static LogicalResult inferTypes(RoiAlignGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes(
          {adaptor.getX(), adaptor.getRois(), adaptor.getDy()},
          {"x", "rois", "dy"}, error)))
    return failure();
  shape::RoiAlignParams params;
  params.mode = adaptor.getMode();
  params.coordinateMode = adaptor.getCoordinateTransformationMode();
  params.outputHeight = static_cast<int64_t>(adaptor.getOutputHeight());
  params.outputWidth = static_cast<int64_t>(adaptor.getOutputWidth());
  params.samplingRatio = static_cast<int64_t>(adaptor.getSamplingRatio());
  shape::Dims y;
  if (failed(error.check(shape::inferRoiAlignShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getRois()),
          shapeOf(adaptor.getBatchIndices()), params, y))) ||
      failed(error.check(
          shape::checkForwardResultGrad(y, shapeOf(adaptor.getDy())))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(RoiAlignGradOp)

static LogicalResult inferTypes(MaxPoolWithIndicesOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::PoolWindowND window;
  window.kernel = toDims(adaptor.getKernel());
  window.strides = toDims(adaptor.getStrides());
  window.dilations = toDims(adaptor.getDilations());
  window.padding = adaptor.getPadding();
  window.pads = toDims(adaptor.getPads());
  window.ceilMode = adaptor.getCeilMode();
  shape::Dims result;
  if (failed(error.check(shape::inferMaxPoolWithIndicesShape(
          shapeOf(adaptor.getX()), window,
          static_cast<int64_t>(adaptor.getStorageOrder()), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  inferred.push_back(
      tensorOf(result, IntegerType::get(adaptor.getX().getContext(), 64)));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxPoolWithIndicesOp)

static LogicalResult inferTypes(MaxUnpoolOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  std::optional<ArrayRef<int64_t>> outputShape = adaptor.getOutputShape();
  shape::DimsRef given;
  if (outputShape)
    given = *outputShape;
  shape::Dims result;
  if (failed(error.check(shape::inferMaxUnpoolShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
          adaptor.getKernel(), adaptor.getStrides(), adaptor.getPads(),
          outputShape ? &given : nullptr, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxUnpoolOp)

static LogicalResult inferTypes(Col2ImOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(error.check(shape::inferCol2ImShape(
          shapeOf(adaptor.getX()), adaptor.getImageShape(),
          adaptor.getBlockShape(), adaptor.getStrides(), adaptor.getDilations(),
          adaptor.getPads(), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Col2ImOp)

static LogicalResult inferTypes(DeformConv2DOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::DeformConvParams params;
  params.strides = adaptor.getStrides();
  params.dilations = adaptor.getDilations();
  params.pads = adaptor.getPads();
  // Absent before the builder fills in the ODS defaults.
  if (IntegerAttr group = adaptor.getGroupAttr())
    params.group = group.getInt();
  if (IntegerAttr offsetGroup = adaptor.getOffsetGroupAttr())
    params.offsetGroup = offsetGroup.getInt();
  shape::DimsRef mask;
  if (adaptor.getMask())
    mask = shapeOf(adaptor.getMask());
  shape::Dims result;
  if (failed(error.check(shape::inferDeformConvShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getFilter()),
          shapeOf(adaptor.getOffset()), shapeOf(adaptor.getBias()),
          adaptor.getMask() ? &mask : nullptr, params, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DeformConv2DOp)

static LogicalResult inferTypes(DeformConv2DGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  SmallVector<Value> operands = {adaptor.getX(), adaptor.getFilter(),
                                 adaptor.getOffset(), adaptor.getDy()};
  SmallVector<StringRef> names = {"x", "filter", "offset", "dy"};
  if (adaptor.getMask()) {
    operands.push_back(adaptor.getMask());
    names.push_back("mask");
  }
  if (failed(verifySameElementTypes(operands, names, error)))
    return failure();
  shape::DeformConvParams params;
  params.strides = adaptor.getStrides();
  params.dilations = adaptor.getDilations();
  params.pads = adaptor.getPads();
  if (IntegerAttr group = adaptor.getGroupAttr())
    params.group = group.getInt();
  if (IntegerAttr offsetGroup = adaptor.getOffsetGroupAttr())
    params.offsetGroup = offsetGroup.getInt();
  shape::DimsRef mask;
  if (adaptor.getMask())
    mask = shapeOf(adaptor.getMask());
  shape::Dims dmask;
  if (failed(error.check(shape::inferDeformConvGradShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getFilter()),
          shapeOf(adaptor.getOffset()), shapeOf(adaptor.getDy()),
          adaptor.getMask() ? &mask : nullptr, params, dmask))))
    return failure();
  Type element = elementTypeOf(adaptor.getX());
  inferred.push_back(adaptor.getX().getType());
  inferred.push_back(adaptor.getFilter().getType());
  inferred.push_back(adaptor.getOffset().getType());
  inferred.push_back(tensorOf(dmask, element));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DeformConv2DGradOp)
