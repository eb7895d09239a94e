//===- GoptLogicOps.cpp - shape functions of GoptLogicOps.td
//---------------===//
//
// Comparisons, logical and bitwise ops, where, mod, float predicates,
// expand and tile. Each op's inferTypes runs the shared shape function
// (gopt/Shape) and gives the result's element type: i1 for comparisons and
// predicates.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

/// The shared function's dims, or its message as a diagnostic.
template <typename Fn>
static LogicalResult inferShape(Shape &result, const ShapeError &error,
                                Fn &&fn) {
  shape::Dims dims;
  if (failed(error.check(fn(dims))))
    return failure();
  result.assign(dims.begin(), dims.end());
  return success();
}

static Type boolType(Value like) {
  return IntegerType::get(like.getContext(), 1);
}

/// Two operands of one element type broadcast into a result of `element`
/// (null: the operands' element type).
static LogicalResult inferBroadcastResult(Value lhs, Value rhs, Type element,
                                          const ShapeError &error,
                                          SmallVectorImpl<Type> &inferred) {
  if (elementTypeOf(lhs) != elementTypeOf(rhs))
    return error("expects operands of one element type, got ",
                 elementTypeOf(lhs), " and ", elementTypeOf(rhs));
  Shape shape;
  if (failed(inferBroadcastShape(shapeOf(lhs), shapeOf(rhs), shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, element ? element : elementTypeOf(lhs)));
  return success();
}

// Comparisons and binary logical ops: an i1 broadcast of their operands.
#define GOPT_BOOL_BROADCAST_OP(OpClass)                                        \
  static LogicalResult inferTypes(OpClass::Adaptor adaptor,                    \
                                  const ShapeError &error,                     \
                                  SmallVectorImpl<Type> &inferred) {           \
    return inferBroadcastResult(adaptor.getLhs(), adaptor.getRhs(),            \
                                boolType(adaptor.getLhs()), error, inferred);  \
  }                                                                            \
  GOPT_SHAPE_FUNCTION_HOOKS(OpClass)

GOPT_BOOL_BROADCAST_OP(EqualOp)
GOPT_BOOL_BROADCAST_OP(LessOp)
GOPT_BOOL_BROADCAST_OP(LessEqualOp)
GOPT_BOOL_BROADCAST_OP(GreaterOp)
GOPT_BOOL_BROADCAST_OP(GreaterEqualOp)
GOPT_BOOL_BROADCAST_OP(AndOp)
GOPT_BOOL_BROADCAST_OP(OrOp)
GOPT_BOOL_BROADCAST_OP(XorOp)

#undef GOPT_BOOL_BROADCAST_OP

static LogicalResult inferTypes(WhereOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Value x = adaptor.getX(), y = adaptor.getY();
  if (elementTypeOf(x) != elementTypeOf(y))
    return error("expects x and y of one element type, got ", elementTypeOf(x),
                 " and ", elementTypeOf(y));
  Shape shape;
  if (failed(inferShape(shape, error, [&](shape::Dims &dims) {
        return shape::inferWhereShape(shapeOf(adaptor.getCondition()),
                                      shapeOf(x), shapeOf(y), dims);
      })))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(x)));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(WhereOp)

static LogicalResult inferTypes(ModOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  // Absent before the builder fills in the ODS default (importers infer
  // types from raw attributes), which is valid.
  if (IntegerAttr fmod = adaptor.getFmodAttr()) {
    int64_t value = fmod.getInt();
    if (value != 0 && value != 1)
      return error("expects fmod 0 or 1, got ", value);
  }
  return inferBroadcastResult(adaptor.getLhs(), adaptor.getRhs(), Type(), error,
                              inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(ModOp)

static LogicalResult inferTypes(BitShiftOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  // Absent until verified (importers infer types from raw attributes).
  if (auto direction =
          dyn_cast_or_null<StringAttr>(adaptor.getProperties().direction);
      direction && direction.getValue() != "LEFT" &&
      direction.getValue() != "RIGHT")
    return error("expects direction \"LEFT\" or \"RIGHT\", got \"",
                 direction.getValue(), "\"");
  return inferBroadcastResult(adaptor.getLhs(), adaptor.getRhs(), Type(), error,
                              inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(BitShiftOp)

// Bitwise ops: a broadcast of their operands, of their element type.
#define GOPT_BITWISE_BROADCAST_OP(OpClass)                                     \
  static LogicalResult inferTypes(OpClass::Adaptor adaptor,                    \
                                  const ShapeError &error,                     \
                                  SmallVectorImpl<Type> &inferred) {           \
    return inferBroadcastResult(adaptor.getLhs(), adaptor.getRhs(), Type(),    \
                                error, inferred);                              \
  }                                                                            \
  GOPT_SHAPE_FUNCTION_HOOKS(OpClass)

GOPT_BITWISE_BROADCAST_OP(BitwiseAndOp)
GOPT_BITWISE_BROADCAST_OP(BitwiseOrOp)
GOPT_BITWISE_BROADCAST_OP(BitwiseXorOp)

#undef GOPT_BITWISE_BROADCAST_OP

static LogicalResult inferTypes(IsNaNOp::Adaptor adaptor, const ShapeError &,
                                SmallVectorImpl<Type> &inferred) {
  inferred.push_back(
      tensorOf(shapeOf(adaptor.getX()), boolType(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(IsNaNOp)

static LogicalResult inferTypes(IsInfOp::Adaptor adaptor, const ShapeError &,
                                SmallVectorImpl<Type> &inferred) {
  inferred.push_back(
      tensorOf(shapeOf(adaptor.getX()), boolType(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(IsInfOp)

static LogicalResult inferTypes(ExpandOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferShape(shape, error, [&](shape::Dims &dims) {
        return shape::inferExpandShape(shapeOf(adaptor.getX()),
                                       adaptor.getShape(), dims);
      })))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ExpandOp)

static LogicalResult inferTypes(TileOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferShape(shape, error, [&](shape::Dims &dims) {
        return shape::inferTileShape(shapeOf(adaptor.getX()),
                                     adaptor.getRepeats(), dims);
      })))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(TileOp)
