//===- DynamicShapeGradients.cpp - Gradients with run-time shape values ---===//
//
// DifferentiableOpInterface for dynamic ops (GoptDynamicShapeOps.td) whose
// value operands are known only at run time, so the static ops' rules
// (which read them as attributes) do not apply:
// - dynamic_slice, dynamic_pad, dynamic_expand and dynamic_tile only move
//   x's elements. The op itself, applied to x's element positions, gives
//   the position each result element came from, and dy is scatter-added
//   there: every framework meaning of the run-time values (negative
//   bounds, steps, reflect/edge/wrap padding, broadcasting) is the forward
//   op's own.
// - dynamic_max_unpool crops or pads dy back to the unpooled shape its
//   indices address, computed from x's run-time shape.
// - the dynamic reductions reduce again with keep_dims (the run-time axes
//   are the forward's) for the kept shape dy is reshaped to, and the sums,
//   ties or products the static rules compute.
// - dynamic_resize writes dynamic_resize_grad: resize_grad with the same
//   run-time roi, scales and sizes, formed by the same adapter, so it
//   replays the forward's taps (ResizeTaps.h).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

#include <limits>

using namespace mlir;

namespace gopt {

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value flattened(OpBuilder &b, Location loc, Value value) {
  return b.create<ReshapeOp>(loc, value, ArrayRef<int64_t>{-1});
}

/// An i64 tensor of `x`'s run-time shape holding each element's row-major
/// position plus 1 (0 is left for a fill value: dynamic_pad's constant).
Value positionsPlusOne(GradientBuilder &gradients, Location loc, Value x) {
  OpBuilder &b = gradients.getBuilder();
  auto i64 = b.getI64Type();
  auto positionsType = RankedTensorType::get(tensorType(x).getShape(), i64);
  Value shape = b.create<ShapeOp>(loc, x);
  Value one = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                  ArrayRef<int64_t>{1}));
  Value ones = b.create<DynamicExpandOp>(loc, positionsType, one, shape);
  Value counted =
      b.create<CumSumOp>(loc, flattened(b, loc, ones), b.getI64IntegerAttr(0),
                         b.getBoolAttr(false), b.getBoolAttr(false));
  return b.create<DynamicReshapeOp>(loc, positionsType, counted, shape,
                                    b.getBoolAttr(true));
}

/// The gradient of `op`, which only moves its operand 0's elements: `op`
/// with operand 0 replaced by its positions (and `replacements` for other
/// operands) says where each result element came from; dy is scatter-added
/// to those positions of a flat accumulator whose slot 0 (fills) is
/// dropped.
LogicalResult
gradientByIndexMap(GradientBuilder &gradients, Operation *op, Value dy,
                   ArrayRef<std::pair<unsigned, Value>> replacements = {}) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  if (!isa<FloatType>(tensorType(x).getElementType()))
    return emitNoGradientError(op) << "an integer input", failure();
  SmallVector<Value> operands(op->getOperands());
  operands[0] = positionsPlusOne(gradients, loc, x);
  for (auto [index, value] : replacements)
    operands[index] = value;
  OperationState state(loc, op->getName());
  state.addOperands(operands);
  state.addAttributes(forwardAttributes(op));
  state.addTypes(
      RankedTensorType::get(tensorType(dy).getShape(), b.getI64Type()));
  Value sources = b.create(state)->getResult(0);
  Value accumulator =
      b.create<PadOp>(loc, flattened(b, loc, gradients.zerosLike(x)),
                      b.getDenseI64ArrayAttr({1, 0}),
                      b.getStringAttr("constant"), b.getF32FloatAttr(0.0f));
  Value sums = b.create<ScatterElementsOp>(
      loc, accumulator, flattened(b, loc, sources), flattened(b, loc, dy),
      b.getI64IntegerAttr(0), b.getStringAttr("add"));
  Value flat = b.create<SliceOp>(
      loc, sums, b.getDenseI64ArrayAttr({1}),
      b.getDenseI64ArrayAttr({std::numeric_limits<int64_t>::max()}),
      b.getDenseI64ArrayAttr({1}));
  gradients.accumulate(x, gradients.reshapeToShapeOf(flat, x));
  return success();
}

enum class ReductionKind { kSum, kMean, kMax, kMin, kProd };

/// The gradient of a dynamic reduction of `x` over the run-time `axes`.
LogicalResult dynamicReduceGradients(GradientBuilder &gradients, Operation *op,
                                     ReductionKind kind, Value dy) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = op->getLoc();
  Value x = op->getOperand(0), axes = op->getOperand(1);
  RankedTensorType xType = tensorType(x);
  Type element = xType.getElementType();
  if (!isa<FloatType>(element))
    return emitNoGradientError(op) << "an integer input", failure();
  // A default-valued attribute: absent when false.
  auto keepDimsAttr = op->getAttrOfType<BoolAttr>("keep_dims");
  bool keepDims = keepDimsAttr && keepDimsAttr.getValue();
  BoolAttr keep = b.getBoolAttr(true);
  Value xShape = b.create<ShapeOp>(loc, x);
  auto reduceSum = [&](Value value) -> Value {
    return b.create<DynamicReduceSumOp>(loc, value, axes, keep);
  };
  auto kept = [&](Value like) {
    return keepDims ? dy : gradients.reshapeToShapeOf(dy, like);
  };
  auto expandToX = [&](Value value) -> Value {
    return b.create<DynamicExpandOp>(loc, xType, value, xShape);
  };
  Value dx;
  switch (kind) {
  case ReductionKind::kSum:
  case ReductionKind::kMean: {
    // The element count of each group (for the mean, and the kept shape).
    Value count = reduceSum(expandToX(gradients.scalarConstant(1.0f, element)));
    Value keptDy = kept(count);
    if (kind == ReductionKind::kMean)
      keptDy = b.create<DivOp>(loc, keptDy, count);
    dx = expandToX(keptDy);
    break;
  }
  case ReductionKind::kMax:
  case ReductionKind::kMin: {
    // dy goes to the elements equal to the result, split among ties.
    Value extremum =
        kind == ReductionKind::kMax
            ? b.create<DynamicReduceMaxOp>(loc, x, axes, keep).getResult()
            : b.create<DynamicReduceMinOp>(loc, x, axes, keep).getResult();
    Value hit =
        b.create<CastOp>(loc, xType, b.create<EqualOp>(loc, x, extremum));
    Value ties = reduceSum(hit);
    dx = b.create<MulOp>(loc, hit, b.create<DivOp>(loc, kept(extremum), ties));
    break;
  }
  case ReductionKind::kProd: {
    // As reduce_prod's rule: the product of the others, y / x without
    // zeros in the group, the rest's product at a single zero, else 0.
    Value zero = gradients.scalarConstant(0.0f, element);
    Value one = gradients.scalarConstant(1.0f, element);
    Value isZero = b.create<EqualOp>(loc, x, zero);
    Value zeros = reduceSum(b.create<CastOp>(loc, xType, isZero));
    Value nonZero = b.create<WhereOp>(loc, isZero, one, x);
    Value others = b.create<DynamicReduceProdOp>(loc, nonZero, axes, keep);
    Value atNonZero =
        b.create<WhereOp>(loc, b.create<EqualOp>(loc, zeros, zero),
                          b.create<DivOp>(loc, others, nonZero), zero);
    Value atZero = b.create<WhereOp>(loc, b.create<EqualOp>(loc, zeros, one),
                                     others, zero);
    dx = b.create<MulOp>(loc, b.create<WhereOp>(loc, isZero, atZero, atNonZero),
                         kept(zeros));
    break;
  }
  }
  gradients.accumulate(x, dx);
  return success();
}

Value i64Vector(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({static_cast<int64_t>(values.size())},
                                     b.getI64Type()),
               values));
}

} // namespace

// y is the unpooled tensor (of the shape U the window gives, which the
// indices address) padded with zeros or cropped at the end of each dim to
// the run-time output_shape: dy is cropped or zero-padded back to U, and
// x's gradient is it at the indices (max_unpool's rule).
LogicalResult DynamicMaxUnpoolOp::buildGradients(GradientBuilder &gradients,
                                                 ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  int64_t rank = tensorType(getX()).getRank();
  ArrayRef<int64_t> kernel = getKernel(), strides = getStrides(),
                    pads = getPads();
  // U = (in - 1) * stride + kernel - pads = in * stride + (kernel - pads -
  // stride) per spatial dim; N and C as x's.
  SmallVector<int64_t> scale(rank, 1), offset(rank, 0), zeros(rank, 0),
      ones(rank, 1), axes;
  for (int64_t i = 0; i + 2 < rank; ++i) {
    scale[2 + i] = strides[i];
    offset[2 + i] = kernel[i] - pads[2 * i] - pads[2 * i + 1] - strides[i];
  }
  for (int64_t i = 0; i < rank; ++i)
    axes.push_back(i);
  Value xShape = b.create<ShapeOp>(loc, getX());
  Value unpooled = b.create<AddOp>(
      loc, b.create<MulOp>(loc, xShape, i64Vector(b, loc, scale)),
      i64Vector(b, loc, offset));
  Value zeroVector = i64Vector(b, loc, zeros);
  // Slicing to U clamps to dy's size: a crop where output_shape is larger.
  Value cropped = b.create<DynamicSliceOp>(loc, dy, zeroVector, unpooled,
                                           i64Vector(b, loc, axes),
                                           i64Vector(b, loc, ones));
  Value grow = b.create<SubOp>(loc, unpooled, b.create<ShapeOp>(loc, cropped));
  Value padding = b.create<ConcatOp>(loc, ValueRange{zeroVector, grow},
                                     b.getI64IntegerAttr(0));
  Value fill = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({1}, tensorType(dy).getElementType()),
               b.getFloatAttr(tensorType(dy).getElementType(), 0.0)));
  Value restored = b.create<DynamicPadOp>(loc, cropped, padding, fill,
                                          b.getStringAttr("constant"));
  gradients.accumulate(
      getX(), b.create<GatherOp>(loc, flattened(b, loc, restored), getIndices(),
                                 b.getI64IntegerAttr(0)));
  return success();
}

LogicalResult DynamicSliceOp::buildGradients(GradientBuilder &gradients,
                                             ArrayRef<Value> resultGrads) {
  return gradientByIndexMap(gradients, *this, resultGrads[0]);
}

LogicalResult DynamicExpandOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  return gradientByIndexMap(gradients, *this, resultGrads[0]);
}

LogicalResult DynamicTileOp::buildGradients(GradientBuilder &gradients,
                                            ArrayRef<Value> resultGrads) {
  return gradientByIndexMap(gradients, *this, resultGrads[0]);
}

LogicalResult DynamicPadOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  // The fill is position 0, which the accumulator drops: constant padding
  // gives nothing back, reflect/edge/wrap padding their source elements.
  if (gradients.needsGrad(getValue()))
    return emitNoGradientError(*this)
               << "the loss depends on its fill value through a parameter",
           failure();
  OpBuilder &b = gradients.getBuilder();
  Value fill = b.create<ConstantOp>(
      getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()),
                             ArrayRef<int64_t>{0}));
  return gradientByIndexMap(gradients, *this, resultGrads[0], {{2, fill}});
}

LogicalResult DynamicReduceSumOp::buildGradients(GradientBuilder &gradients,
                                                 ArrayRef<Value> resultGrads) {
  return dynamicReduceGradients(gradients, *this, ReductionKind::kSum,
                                resultGrads[0]);
}

LogicalResult DynamicReduceMeanOp::buildGradients(GradientBuilder &gradients,
                                                  ArrayRef<Value> resultGrads) {
  return dynamicReduceGradients(gradients, *this, ReductionKind::kMean,
                                resultGrads[0]);
}

LogicalResult DynamicReduceMaxOp::buildGradients(GradientBuilder &gradients,
                                                 ArrayRef<Value> resultGrads) {
  return dynamicReduceGradients(gradients, *this, ReductionKind::kMax,
                                resultGrads[0]);
}

LogicalResult DynamicReduceMinOp::buildGradients(GradientBuilder &gradients,
                                                 ArrayRef<Value> resultGrads) {
  return dynamicReduceGradients(gradients, *this, ReductionKind::kMin,
                                resultGrads[0]);
}

LogicalResult DynamicReduceProdOp::buildGradients(GradientBuilder &gradients,
                                                  ArrayRef<Value> resultGrads) {
  return dynamicReduceGradients(gradients, *this, ReductionKind::kProd,
                                resultGrads[0]);
}

// The roi and scales are constants of the gradient: resize_grad reads them
// as attributes, and their own gradient (how the taps move) is not written.
LogicalResult DynamicResizeOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  if (gradients.needsGrad(getRoi()) || gradients.needsGrad(getScales()))
    return emitNoGradientError(*this)
               << "the loss depends on its roi or scales through a parameter "
                  "(only the gradient with respect to the input is "
                  "implemented)",
           failure();
  if (!gradients.needsGrad(getInput()))
    return success();
  Value dx = gradients.getBuilder().create<DynamicResizeGradOp>(
      getLoc(), TypeRange{getInput().getType()},
      ValueRange{getInput(), resultGrads[0], getRoi(), getScales(), getSizes()},
      forwardAttributes(*this));
  gradients.accumulate(getInput(), dx);
  return success();
}

} // namespace gopt
