//===- DataMovementGradients.cpp - Gradients of ops that move data --------===//
//
// DifferentiableOpInterface for the ops that rearrange elements: each
// gradient moves dy back where the elements came from (reshape back,
// inverse transpose, slice <-> pad, concat into slices, gather into a
// scatter-add, broadcasts summed, cumsum summed the other way, scatters
// into a gather of dy and dy with the overwritten elements zeroed).
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

/// A slice of every dimension of `shape`: `[0, end)` where `end` is the
/// static size or, for a dynamic one, a bound the runtime clamps.
SmallVector<int64_t> fullEnds(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> ends;
  for (int64_t d : shape)
    ends.push_back(
        ShapedType::isDynamic(d) ? std::numeric_limits<int64_t>::max() : d);
  return ends;
}

/// The gradient of an op that only changes its operand's dimensions.
LogicalResult reshapeBack(GradientBuilder &gradients, Operation *op, Value dy) {
  FailureOr<Value> dx = gradients.reshapeTo(op, dy, op->getOperand(0));
  if (failed(dx))
    return failure();
  gradients.accumulate(op->getOperand(0), *dx);
  return success();
}

} // namespace

LogicalResult ReshapeOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  return reshapeBack(gradients, *this, resultGrads[0]);
}

LogicalResult FlattenOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  return reshapeBack(gradients, *this, resultGrads[0]);
}

LogicalResult TransposeOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  gradients.accumulate(getX(),
                       b.create<TransposeOp>(getLoc(), resultGrads[0],
                                             b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult ConcatOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value dy = resultGrads[0];
  int64_t rank = tensorType(getY()).getRank();
  int64_t axis = static_cast<int64_t>(getAxis()); // I64Attr: uint64_t
  if (axis < 0)
    axis += rank;
  int64_t offset = 0;
  for (Value input : getInputs()) {
    int64_t size = tensorType(input).getDimSize(axis);
    if (ShapedType::isDynamic(size))
      return emitNoGradientError(*this)
                 << "an operand of dynamic size along the axis",
             failure();
    if (gradients.needsGrad(input)) {
      SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
      SmallVector<int64_t> ends = fullEnds(tensorType(dy).getShape());
      starts[axis] = offset;
      ends[axis] = offset + size;
      gradients.accumulate(
          input, b.create<SliceOp>(getLoc(), dy, b.getDenseI64ArrayAttr(starts),
                                   b.getDenseI64ArrayAttr(ends),
                                   b.getDenseI64ArrayAttr(steps)));
    }
    offset += size;
  }
  return success();
}

LogicalResult SliceOp::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  // The slice's gradient is dy zero-padded back to the input's shape.
  OpBuilder &b = gradients.getBuilder();
  ArrayRef<int64_t> shape = tensorType(getX()).getShape();
  SmallVector<int64_t> pads;
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t start = getStarts()[i], end = getEnds()[i];
    if (getSteps()[i] != 1)
      return emitNoGradientError(*this)
                 << "a strided slice (step " << getSteps()[i]
                 << " in dimension " << i << ")",
             failure();
    if (ShapedType::isDynamic(d)) {
      if (start != 0 || end < std::numeric_limits<int32_t>::max())
        return emitNoGradientError(*this)
                   << "a slice of dynamic dimension " << i,
               failure();
      pads.append({0, 0});
      continue;
    }
    end = std::min(end, d);
    pads.append({start, d - std::max(end, start)});
  }
  gradients.accumulate(getX(), b.create<PadOp>(getLoc(), resultGrads[0],
                                               b.getDenseI64ArrayAttr(pads),
                                               b.getStringAttr("constant"),
                                               b.getF32FloatAttr(0.0f)));
  return success();
}

LogicalResult PadOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  if (getMode() != "constant")
    return emitNoGradientError(*this)
               << "pad mode \"" << getMode()
               << "\" (only constant padding is differentiated)",
           failure();
  ArrayRef<int64_t> shape = tensorType(getX()).getShape();
  ArrayRef<int64_t> pads = getPads();
  SmallVector<int64_t> starts, ends = fullEnds(shape), steps;
  for (auto [i, d] : llvm::enumerate(shape)) {
    starts.push_back(pads[2 * i]);
    steps.push_back(1);
    if (!ShapedType::isDynamic(d))
      ends[i] = pads[2 * i] + d;
    else if (pads[2 * i] != 0 || pads[2 * i + 1] != 0)
      return emitNoGradientError(*this) << "padding of dynamic dimension " << i,
             failure();
  }
  gradients.accumulate(
      getX(), b.create<SliceOp>(
                  getLoc(), resultGrads[0], b.getDenseI64ArrayAttr(starts),
                  b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps)));
  return success();
}

LogicalResult ExpandOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  FailureOr<Value> reduced =
      gradients.unbroadcast(*this, resultGrads[0], getX());
  if (failed(reduced))
    return failure();
  gradients.accumulate(getX(), *reduced);
  return success();
}

LogicalResult TileOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  // dy viewed as [r0, d0, r1, d1, ...], summed over the repeats; one
  // dynamic dimension is the reshape's inferred (-1) one.
  OpBuilder &b = gradients.getBuilder();
  ArrayRef<int64_t> shape = tensorType(getX()).getShape();
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return emitNoGradientError(*this)
               << "a tile of more than one dynamic dimension",
           failure();
  SmallVector<int64_t> split, repeatAxes;
  for (auto [i, d] : llvm::enumerate(shape)) {
    repeatAxes.push_back(split.size());
    split.append({getRepeats()[i], ShapedType::isDynamic(d) ? -1 : d});
  }
  Value view = b.create<ReshapeOp>(getLoc(), resultGrads[0], split);
  gradients.accumulate(getX(),
                       b.create<ReduceSumOp>(getLoc(), view,
                                             b.getDenseI64ArrayAttr(repeatAxes),
                                             b.getBoolAttr(false)));
  return success();
}

LogicalResult GatherOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  // A scatter-add of dy into zeros of x's shape: rows gathered twice
  // (an embedding used twice in a batch) get both gradients.
  gradients.accumulate(getX(), gradients.getBuilder().create<GatherGradOp>(
                                   getLoc(), getX(), getIndices(),
                                   resultGrads[0], getAxisAttr()));
  return success();
}

// y_i sums x_j over j <= i (j < i exclusive), so x_j's gradient sums dy_i
// over i >= j (i > j): the same cumsum of dy in the other direction.
LogicalResult CumSumOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  gradients.accumulate(
      getX(), b.create<CumSumOp>(
                  getLoc(), resultGrads[0], b.getI64IntegerAttr(getAxis()),
                  b.getBoolAttr(getExclusive()), b.getBoolAttr(!getReverse())));
  return success();
}

// The dynamic reshapes: dy reshaped to x's run-time shape.
LogicalResult DynamicReshapeOp::buildGradients(GradientBuilder &gradients,
                                               ArrayRef<Value> resultGrads) {
  gradients.accumulate(getX(),
                       gradients.reshapeToShapeOf(resultGrads[0], getX()));
  return success();
}

LogicalResult DynamicSqueezeOp::buildGradients(GradientBuilder &gradients,
                                               ArrayRef<Value> resultGrads) {
  gradients.accumulate(getX(),
                       gradients.reshapeToShapeOf(resultGrads[0], getX()));
  return success();
}

LogicalResult DynamicUnsqueezeOp::buildGradients(GradientBuilder &gradients,
                                                 ArrayRef<Value> resultGrads) {
  gradients.accumulate(getX(),
                       gradients.reshapeToShapeOf(resultGrads[0], getX()));
  return success();
}

// Each element of y came from one element of x: dy scatter-added back
// (an element gathered twice gets both gradients).
LogicalResult GatherElementsOp::buildGradients(GradientBuilder &gradients,
                                               ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  gradients.accumulate(getX(), b.create<ScatterElementsOp>(
                                   getLoc(), gradients.zerosLike(getX()),
                                   getIndices(), resultGrads[0], getAxisAttr(),
                                   b.getStringAttr("add")));
  return success();
}

LogicalResult GatherNDOp::buildGradients(GradientBuilder &gradients,
                                         ArrayRef<Value> resultGrads) {
  if (getBatchDims() != 0)
    return emitNoGradientError(*this)
               << "batch_dims " << getBatchDims()
               << " (scatter_nd, its gradient, has no batch dimensions)",
           failure();
  OpBuilder &b = gradients.getBuilder();
  gradients.accumulate(
      getX(),
      b.create<ScatterNDOp>(getLoc(), gradients.zerosLike(getX()), getIndices(),
                            resultGrads[0], b.getStringAttr("add")));
  return success();
}

// y is x with some elements replaced by (or added to) updates: x's gradient
// is dy, zeroed where an update replaced the element; the updates' is dy at
// their positions. With "none" and a repeated index only the last update
// reaches y, yet each gets dy there (as in PyTorch, which leaves repeated
// indices undefined too).
LogicalResult ScatterElementsOp::buildGradients(GradientBuilder &gradients,
                                                ArrayRef<Value> resultGrads) {
  if (getReduction() == "mul" || getReduction() == "max" ||
      getReduction() == "min")
    return emitNoGradientError(*this)
               << "reduction \"" << getReduction() << "\"",
           failure();
  OpBuilder &b = gradients.getBuilder();
  Value dy = resultGrads[0];
  if (gradients.needsGrad(getX()))
    gradients.accumulate(getX(),
                         getReduction() == "add"
                             ? dy
                             : b.create<ScatterElementsOp>(
                                   getLoc(), dy, getIndices(),
                                   gradients.zerosLike(getUpdates()),
                                   getAxisAttr(), b.getStringAttr("none")));
  if (gradients.needsGrad(getUpdates()))
    gradients.accumulate(
        getUpdates(),
        b.create<GatherElementsOp>(getLoc(), dy, getIndices(), getAxisAttr()));
  return success();
}

LogicalResult ScatterNDOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  if (getReduction() == "mul" || getReduction() == "max" ||
      getReduction() == "min")
    return emitNoGradientError(*this)
               << "reduction \"" << getReduction() << "\"",
           failure();
  OpBuilder &b = gradients.getBuilder();
  Value dy = resultGrads[0];
  if (gradients.needsGrad(getX()))
    gradients.accumulate(
        getX(), getReduction() == "add"
                    ? dy
                    : b.create<ScatterNDOp>(getLoc(), dy, getIndices(),
                                            gradients.zerosLike(getUpdates()),
                                            b.getStringAttr("none")));
  if (gradients.needsGrad(getUpdates()))
    gradients.accumulate(getUpdates(),
                         b.create<GatherNDOp>(getLoc(), dy, getIndices(),
                                              b.getI64IntegerAttr(0)));
  return success();
}

// The values are elements of x at the indices result: dy scatter-added
// back along the axis (the indices are distinct, so "add" only fills).
template <typename TopK>
static LogicalResult topKGradients(TopK op, GradientBuilder &gradients,
                                   ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  RankedTensorType xType = tensorType(op.getX());
  if (!isa<FloatType>(xType.getElementType()))
    return emitNoGradientError(op) << "an integer input", failure();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += xType.getRank();
  gradients.accumulate(op.getX(),
                       b.create<ScatterElementsOp>(
                           op.getLoc(), gradients.zerosLike(op.getX()),
                           op.getIndices(), resultGrads[0],
                           b.getI64IntegerAttr(axis), b.getStringAttr("add")));
  return success();
}

LogicalResult TopKOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  return topKGradients(*this, gradients, resultGrads);
}

LogicalResult DynamicTopKOp::buildGradients(GradientBuilder &gradients,
                                            ArrayRef<Value> resultGrads) {
  return topKGradients(*this, gradients, resultGrads);
}

// As cumsum's, along the axis computed at run time.
LogicalResult DynamicCumSumOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  gradients.accumulate(getX(), b.create<DynamicCumSumOp>(
                                   getLoc(), getX().getType(), resultGrads[0],
                                   getAxis(), b.getBoolAttr(getExclusive()),
                                   b.getBoolAttr(!getReverse())));
  return success();
}

namespace {

/// `value` as one row-major vector.
Value flattened(OpBuilder &b, Location loc, Value value) {
  return b.create<ReshapeOp>(loc, value, ArrayRef<int64_t>{-1});
}

} // namespace

// indices are flat row-major positions in x: dy scatter-added to them in
// the flattened x (overlapping windows can pick one element twice).
LogicalResult
MaxPoolWithIndicesOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  if (!resultGrads[0])
    return success();
  RankedTensorType xType = tensorType(getX());
  if (!isa<FloatType>(xType.getElementType()))
    return emitNoGradientError(*this) << "an integer input", failure();
  if (getStorageOrder() != 0)
    return emitNoGradientError(*this)
               << "storage_order 1 (column-major indices)",
           failure();
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value flat = b.create<ScatterElementsOp>(
      loc, flattened(b, loc, gradients.zerosLike(getX())),
      flattened(b, loc, getIndices()), flattened(b, loc, resultGrads[0]),
      b.getI64IntegerAttr(0), b.getStringAttr("add"));
  gradients.accumulate(getX(), gradients.reshapeToShapeOf(flat, getX()));
  return success();
}

// y is zero but for x at the flat indices: x's gradient is dy there.
LogicalResult MaxUnpoolOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  if (getOutputShape())
    return emitNoGradientError(*this)
               << "an output_shape (the indices address the unpooled "
                  "tensor before its padding or cropping)",
           failure();
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  gradients.accumulate(
      getX(), b.create<GatherOp>(loc, flattened(b, loc, resultGrads[0]),
                                 getIndices(), b.getI64IntegerAttr(0)));
  return success();
}

} // namespace gopt
