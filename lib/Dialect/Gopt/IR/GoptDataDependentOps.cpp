//===- GoptDataDependentOps.cpp - type inference of data-shaped results ---===//
//
// non_zero, compress, unique, non_max_suppression and image_decoder
// (GoptDataDependentOps.td): adapters over the shared shape functions
// (lib/Shape/DataDependentShapes.cpp), which give upper bounds; the
// dimensions the data decides become dynamic here.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <> unsigned getExpectedResultCount<UniqueOp>(UniqueOp::Adaptor) {
  return 4;
}
} // namespace gopt::detail

/// `bound` with dimension `counted` dynamic: its size is known only when the
/// op runs.
static RankedTensorType countedTensor(shape::Dims bound, int64_t counted,
                                      Type elementType) {
  bound[counted] = shape::kDynamic;
  return tensorOf(bound, elementType);
}

static LogicalResult inferTypes(NonZeroOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims bound;
  if (failed(error.check(
          shape::inferNonZeroShape(shapeOf(adaptor.getX()), bound))))
    return failure();
  Builder b(adaptor.getX().getContext());
  types.push_back(countedTensor(bound, 1, b.getI64Type()));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(NonZeroOp)

static LogicalResult inferTypes(CompressOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims bound;
  int64_t counted = 0;
  std::optional<uint64_t> axis = adaptor.getAxis();
  if (failed(error.check(shape::inferCompressShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getCondition()),
          axis.has_value(), axis ? static_cast<int64_t>(*axis) : 0, bound,
          counted))))
    return failure();
  types.push_back(countedTensor(bound, counted, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(CompressOp)

static LogicalResult inferTypes(UniqueOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims y, indices, inverse, counts;
  int64_t counted = 0;
  std::optional<uint64_t> axis = adaptor.getAxis();
  if (failed(error.check(
          shape::inferUniqueShape(shapeOf(adaptor.getX()), axis.has_value(),
                                  axis ? static_cast<int64_t>(*axis) : 0, y,
                                  indices, inverse, counts, counted))))
    return failure();
  Builder b(adaptor.getX().getContext());
  types.push_back(countedTensor(y, counted, elementTypeOf(adaptor.getX())));
  types.push_back(countedTensor(indices, 0, b.getI64Type()));
  types.push_back(tensorOf(inverse, b.getI64Type()));
  types.push_back(countedTensor(counts, 0, b.getI64Type()));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(UniqueOp)

static LogicalResult inferTypes(NonMaxSuppressionOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  if (failed(verifySameElementTypes(
          {adaptor.getBoxes(), adaptor.getScores(), adaptor.getIouThreshold(),
           adaptor.getScoreThreshold()},
          {"boxes", "scores", "iou_threshold", "score_threshold"}, error)))
    return failure();
  if (adaptor.getCenterPointBox() > 1)
    return error("expects center_point_box 0 or 1, got ",
                 adaptor.getCenterPointBox());
  shape::Dims bound;
  if (failed(error.check(shape::inferNonMaxSuppressionShape(
          shapeOf(adaptor.getBoxes()), shapeOf(adaptor.getScores()),
          shapeOf(adaptor.getMaxOutputBoxesPerClass()),
          shapeOf(adaptor.getIouThreshold()),
          shapeOf(adaptor.getScoreThreshold()), bound))))
    return failure();
  Builder b(adaptor.getBoxes().getContext());
  types.push_back(countedTensor(bound, 0, b.getI64Type()));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(NonMaxSuppressionOp)

static LogicalResult inferTypes(ImageDecoderOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims image;
  StringRef format = adaptor.getPixelFormat();
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return error.check(shape::Result::failure(
        ("pixel_format '" + format + "' is not one of RGB, BGR, Grayscale")
            .str()));
  int64_t channels = format == "Grayscale" ? 1 : 3;
  if (failed(error.check(shape::inferImageDecoderShape(
          shapeOf(adaptor.getEncodedStream()), channels, image))))
    return failure();
  types.push_back(tensorOf(image, elementTypeOf(adaptor.getEncodedStream())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ImageDecoderOp)
