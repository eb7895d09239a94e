//===- GradientBuilder.cpp - What gradient rules write with ---------------===//

#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"

using namespace mlir;

namespace gopt {

GradientBuilder::~GradientBuilder() = default;

InFlightDiagnostic emitNoGradientError(Operation *op) {
  return op->emitOpError("has no gradient in gopt-autodiff: ");
}

FailureOr<SmallVector<int64_t>> getReshapeTarget(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> target;
  int dynamic = 0;
  for (int64_t d : shape) {
    dynamic += ShapedType::isDynamic(d);
    target.push_back(ShapedType::isDynamic(d) ? -1 : d);
  }
  if (dynamic > 1)
    return failure();
  return target;
}

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value GradientBuilder::scalarConstant(float value, Type elementType) {
  return constantLike({}, value, elementType);
}

Value GradientBuilder::constantLike(ArrayRef<int64_t> shape, float value,
                                    Type elementType) {
  auto type = RankedTensorType::get(shape, elementType);
  // Through a FloatAttr, which rounds `value` to the element type:
  // DenseElementsAttr::get(type, float) stores four bytes whatever the type
  // (a malformed bf16/f16 constant that plan lowering rejects).
  return builder.create<ConstantOp>(
      sumLoc,
      DenseElementsAttr::get(type, builder.getFloatAttr(elementType, value)));
}

Value GradientBuilder::zerosLike(Value like) {
  auto type = tensorType(like);
  if (type.hasStaticShape())
    return constantLike(type.getShape(), 0.0f, type.getElementType());
  Value zero = scalarConstant(0.0f, type.getElementType());
  Value shape = builder.create<ShapeOp>(sumLoc, like);
  return builder.create<DynamicExpandOp>(sumLoc, type, zero, shape);
}

Value GradientBuilder::reshapeToShapeOf(Value grad, Value like) {
  Value shape = builder.create<ShapeOp>(sumLoc, like);
  // allow_zero: a zero-sized dimension of `like` stays zero rather than
  // copying grad's dimension at that index.
  return builder.create<DynamicReshapeOp>(sumLoc, like.getType(), grad, shape,
                                          builder.getBoolAttr(true));
}

Value GradientBuilder::scaleByGrad(Value grad, Value dy) {
  if (isUnitSeed(dy))
    return grad;
  return builder.create<MulOp>(sumLoc, grad, dy);
}

FailureOr<Value> GradientBuilder::reshapeTo(Operation *op, Value grad,
                                            Value like) {
  if (tensorType(grad) == tensorType(like))
    return grad;
  FailureOr<SmallVector<int64_t>> target =
      getReshapeTarget(tensorType(like).getShape());
  if (failed(target))
    return emitNoGradientError(op) << "its operand " << like.getType()
                                   << " has more than one dynamic dimension",
           failure();
  return builder.create<ReshapeOp>(op->getLoc(), grad, *target).getResult();
}

FailureOr<Value> GradientBuilder::unbroadcast(Operation *op, Value grad,
                                              Value operand) {
  ArrayRef<int64_t> result = tensorType(grad).getShape();
  ArrayRef<int64_t> shape = tensorType(operand).getShape();
  int64_t lead = result.size() - shape.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(result.size()); ++i) {
    if (i < lead) {
      axes.push_back(i);
      continue;
    }
    // A dynamic operand dim equals the result's; a size-1 dim against a
    // dynamic one is summed (harmless when it is 1 at run time too).
    if (shape[i - lead] == 1 && result[i] != 1)
      axes.push_back(i);
  }
  if (axes.empty())
    return reshapeTo(op, grad, operand);
  Value sum = builder.create<ReduceSumOp>(op->getLoc(), grad,
                                          builder.getDenseI64ArrayAttr(axes),
                                          builder.getBoolAttr(true));
  return reshapeTo(op, sum, operand);
}

LogicalResult GradientBuilder::accumulateBroadcast(Operation *op, Value operand,
                                                   Value grad) {
  if (!grad || !needsGrad(operand))
    return success();
  FailureOr<Value> reduced = unbroadcast(op, grad, operand);
  if (failed(reduced))
    return failure();
  accumulate(operand, *reduced);
  return success();
}

SmallVector<NamedAttribute> forwardAttributes(Operation *op) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != GoptDialect::getDeviceAttrName())
      attributes.push_back(attr);
  return attributes;
}

LogicalResult buildUnaryMathGradient(Operation *op, OperationName gradOpName,
                                     GradientBuilder &builder,
                                     ArrayRef<Value> resultGrads) {
  // dx = <op>_grad(x, dy) with the op's attributes (GoptMathOps.td); the
  // placement of the forward op is not the gradient's.
  Value x = op->getOperand(0);
  OperationState state(op->getLoc(), gradOpName);
  state.addOperands({x, resultGrads[0]});
  state.addTypes(x.getType());
  state.addAttributes(forwardAttributes(op));
  builder.accumulate(x, builder.getBuilder().create(state)->getResult(0));
  return success();
}

} // namespace gopt
