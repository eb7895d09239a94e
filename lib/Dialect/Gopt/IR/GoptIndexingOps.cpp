//===- GoptIndexingOps.cpp - type inference of the indexing ops -----------===//
//
// gather, scatter, arg_max/arg_min and cumsum (GoptIndexingOps.td): adapters
// over the shared shape functions (lib/Shape/IndexingShapes.cpp).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <> unsigned getExpectedResultCount<TopKOp>(TopKOp::Adaptor) {
  return 2;
}
} // namespace gopt::detail

/// One result of `shape` with element type `elementType`, or failure with
/// the shape function's message.
static LogicalResult inferred(const shape::Result &result,
                              const shape::Dims &shape, Type elementType,
                              const ShapeError &error,
                              SmallVectorImpl<Type> &types) {
  if (failed(error.check(result)))
    return failure();
  types.push_back(tensorOf(shape, elementType));
  return success();
}

static LogicalResult inferTypes(GatherOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  return inferred(shape::inferGatherShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      static_cast<int64_t>(adaptor.getAxis()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GatherOp)

static LogicalResult inferTypes(GatherGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getDy()},
                                    {"x", "dy"}, error)))
    return failure();
  shape::Dims shape;
  return inferred(shape::inferGatherGradShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      shapeOf(adaptor.getDy()),
                      static_cast<int64_t>(adaptor.getAxis()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GatherGradOp)

static LogicalResult inferTypes(GatherElementsOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  return inferred(shape::inferGatherElementsShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      static_cast<int64_t>(adaptor.getAxis()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GatherElementsOp)

static LogicalResult inferTypes(GatherNDOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  return inferred(shape::inferGatherNDShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      static_cast<int64_t>(adaptor.getBatchDims()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GatherNDOp)

static LogicalResult inferTypes(ScatterElementsOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getUpdates()},
                                    {"x", "updates"}, error)))
    return failure();
  shape::Dims shape;
  return inferred(shape::inferScatterElementsShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      shapeOf(adaptor.getUpdates()),
                      static_cast<int64_t>(adaptor.getAxis()),
                      std::string_view(adaptor.getReduction()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(ScatterElementsOp)

static LogicalResult inferTypes(ScatterNDOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getUpdates()},
                                    {"x", "updates"}, error)))
    return failure();
  shape::Dims shape;
  return inferred(shape::inferScatterNDShape(
                      shapeOf(adaptor.getX()), shapeOf(adaptor.getIndices()),
                      shapeOf(adaptor.getUpdates()),
                      std::string_view(adaptor.getReduction()), shape),
                  shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(ScatterNDOp)

template <typename Adaptor>
static LogicalResult inferArgReduceTypes(Adaptor adaptor,
                                         const ShapeError &error,
                                         SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  return inferred(
      shape::inferArgReduceShape(shapeOf(adaptor.getX()),
                                 static_cast<int64_t>(adaptor.getAxis()),
                                 adaptor.getKeepDims(), shape),
      shape, IntegerType::get(adaptor.getX().getContext(), 64), error, types);
}

static LogicalResult inferTypes(ArgMaxOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferArgReduceTypes(adaptor, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(ArgMaxOp)

static LogicalResult inferTypes(ArgMinOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferArgReduceTypes(adaptor, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(ArgMinOp)

static LogicalResult inferTypes(CumSumOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  return inferred(
      shape::inferCumSumShape(shapeOf(adaptor.getX()),
                              static_cast<int64_t>(adaptor.getAxis()), shape),
      shape, elementTypeOf(adaptor.getX()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(CumSumOp)

static LogicalResult inferTypes(TfIdfVectorizerOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  std::optional<ArrayRef<float>> weights = adaptor.getWeights();
  shape::Dims shape;
  return inferred(
      shape::inferTfIdfVectorizerShape(
          shapeOf(adaptor.getX()), adaptor.getMinGramLength(),
          adaptor.getMaxGramLength(), adaptor.getMaxSkipCount(),
          adaptor.getNgramCounts(), adaptor.getNgramIndexes(),
          adaptor.getPoolInt64s(), weights ? weights->size() : 0, shape),
      shape, Float32Type::get(adaptor.getX().getContext()), error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(TfIdfVectorizerOp)

static LogicalResult inferTypes(TopKOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  shape::Dims shape;
  if (failed(inferred(
          shape::inferTopKShape(shapeOf(adaptor.getX()),
                                static_cast<int64_t>(adaptor.getK()),
                                static_cast<int64_t>(adaptor.getAxis()), shape),
          shape, elementTypeOf(adaptor.getX()), error, types)))
    return failure();
  types.push_back(
      tensorOf(shape, IntegerType::get(adaptor.getX().getContext(), 64)));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(TopKOp)
