//===- GoptNormOps.cpp - Shape functions of the normalization ops ---------===//
//
// layer_norm, instance_norm and lrn (GoptNormOps.td), adapted from the shared
// shape functions (gopt/Shape/ShapeFunctions.h).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

static LogicalResult inferTypes(LayerNormOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(error.check(shape::inferLayerNormShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getScale()),
          shapeOf(adaptor.getBias()), adaptor.getAxis(), result))))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f))
    return error("expects epsilon >= 0, got ", epsilon);
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LayerNormOp)

/// The channel axis of a normalization's input: `data_format` for rank 4,
/// axis 1 otherwise.
static FailureOr<int64_t> normalizationChannelAxis(StringRef dataFormat,
                                                   int64_t rank,
                                                   const ShapeError &error) {
  if (rank == 4) {
    shape::Layout layout;
    if (failed(error.check(shape::parseDataFormat(dataFormat, layout))))
      return failure();
  }
  return shape::normalizationChannelAxis(dataFormat, rank);
}

static LogicalResult inferTypes(InstanceNormOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  FailureOr<int64_t> channelAxis =
      normalizationChannelAxis(adaptor.getDataFormat(), x.size(), error);
  if (failed(channelAxis))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferInstanceNormShape(
          x, shapeOf(adaptor.getScale()), shapeOf(adaptor.getBias()),
          x.size() >= 3 ? *channelAxis : 0, result))))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f))
    return error("expects epsilon >= 0, got ", epsilon);
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(InstanceNormOp)

static LogicalResult inferTypes(LrnOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  if (failed(
          normalizationChannelAxis(adaptor.getDataFormat(), x.size(), error)))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferLrnShape(x, adaptor.getSize(), result))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LrnOp)
