//===- DataMovementGradients.cpp - Gradients of ops that move data --------===//
//
// DifferentiableOpInterface for the ops that rearrange elements: each
// gradient moves dy back where the elements came from (reshape back,
// inverse transpose, slice <-> pad, concat into slices, gather into a
// scatter-add, broadcasts summed, cumsum summed the other way).
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
  int64_t axis = getAxis() < 0 ? getAxis() + rank : getAxis();
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
  if (gradients.needsGrad(getIndices()))
    return emitNoGradientError(*this) << "indices that depend on a parameter",
           failure();
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

} // namespace gopt
