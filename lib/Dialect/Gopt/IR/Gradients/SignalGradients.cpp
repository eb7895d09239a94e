//===- SignalGradients.cpp - Gradients of the spectral transforms ---------===//
//
// DifferentiableOpInterface for dft and stft (and dynamic_stft): both are
// linear, so their gradients are their adjoints. The adjoint of a DFT is the
// DFT in the opposite direction with the other scale (complex values are
// pairs of reals to the loss, so the adjoint is the conjugate transpose);
// onesided results are zero-padded back to the full spectrum first and a
// real input keeps the real part. An stft's frames are a gather of the
// signal, so the frames' adjoint DFT times the window is scatter-added
// back (an overlap-add). det's gradient is det(x) * inverse(x)^T, and
// matrix_inverse's -Y^T dy Y^T (Y the inverse).
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

/// `value` zero-padded at the end of `axis` by `count` elements.
Value padEnd(OpBuilder &b, Location loc, Value value, int64_t axis,
             int64_t count) {
  SmallVector<int64_t> pads(2 * tensorType(value).getRank(), 0);
  pads[2 * axis + 1] = count;
  return b.create<PadOp>(loc, value, b.getDenseI64ArrayAttr(pads),
                         b.getStringAttr("constant"), b.getF32FloatAttr(0.0f));
}

/// `value`'s elements `[0, size)` along `axis`.
Value sliceFront(OpBuilder &b, Location loc, Value value, int64_t axis,
                 int64_t size) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1), ends;
  // A dynamic dimension's end is a bound the runtime clamps.
  for (int64_t d : shape)
    ends.push_back(
        ShapedType::isDynamic(d) ? std::numeric_limits<int64_t>::max() : d);
  ends[axis] = size;
  return b.create<SliceOp>(loc, value, b.getDenseI64ArrayAttr(starts),
                           b.getDenseI64ArrayAttr(ends),
                           b.getDenseI64ArrayAttr(steps));
}

/// The adjoint of a `length`-point DFT along `axis` applied to `dy` (complex,
/// `[..., bins, ..., 2]`, `bins` = `length` or the onesided `length / 2 +
/// 1`): the full complex gradient of the transform's `length` input samples.
/// The forward sum_n x[n] exp(-2 pi i k n / L) has the adjoint
/// sum_k dy[k] exp(+2 pi i k n / L) = L * idft(dy); the inverse's
/// (1 / L) sum_n x[n] exp(+...) has (1 / L) * dft(dy).
Value adjointDft(GradientBuilder &gradients, Location loc, Value dy,
                 int64_t axis, bool inverse, int64_t length) {
  OpBuilder &b = gradients.getBuilder();
  int64_t bins = tensorType(dy).getDimSize(axis);
  if (bins < length)
    dy = padEnd(b, loc, dy, axis, length - bins);
  Value transformed = b.create<DftOp>(
      loc, dy, b.getI64IntegerAttr(axis), b.getBoolAttr(!inverse),
      b.getBoolAttr(false), b.getI64IntegerAttr(length));
  float scale =
      inverse ? 1.0f / static_cast<float>(length) : static_cast<float>(length);
  return b.create<MulOp>(
      loc, transformed,
      gradients.scalarConstant(scale, tensorType(dy).getElementType()));
}

Value i64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> values) {
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(shape, b.getI64Type()),
                                  values));
}

/// The stft's frame index map `[frames, frame_length]`: frame f's sample n
/// is signal sample `f * frameStep + n` (`frameStep` a one-element i64
/// value). The frame count is dy's dimension 1, read at run time when it
/// is dynamic (a frame_step known only at run time).
Value frameIndices(OpBuilder &b, Location loc, Value dy, int64_t frameLength,
                   Value frameStep) {
  int64_t frames = tensorType(dy).getDimSize(1);
  Value starts;
  if (ShapedType::isDynamic(frames)) {
    Value shape = b.create<ShapeOp>(loc, dy);
    Value count = b.create<SliceOp>(loc, shape, b.getDenseI64ArrayAttr({1}),
                                    b.getDenseI64ArrayAttr({2}),
                                    b.getDenseI64ArrayAttr({1}));
    Value limit = b.create<ReshapeOp>(loc, count, ArrayRef<int64_t>{});
    Value range = b.create<DynamicRangeOp>(
        loc, RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type()),
        i64Constant(b, loc, {}, {0}), limit, i64Constant(b, loc, {}, {1}));
    starts = b.create<ReshapeOp>(loc, range, ArrayRef<int64_t>{-1, 1});
  } else {
    SmallVector<int64_t> frameStarts;
    for (int64_t f = 0; f < frames; ++f)
      frameStarts.push_back(f);
    starts = i64Constant(b, loc, {frames, 1}, frameStarts);
  }
  SmallVector<int64_t> offsets;
  for (int64_t n = 0; n < frameLength; ++n)
    offsets.push_back(n);
  Value within = i64Constant(b, loc, {frameLength}, offsets);
  Value scaled = b.create<MulOp>(loc, starts, frameStep);
  return b.create<AddOp>(loc, scaled, within);
}

/// The gradients of an stft of `signal` `[batch, length, 1 or 2]` with
/// `window` (null: ones) into `dy` `[batch, frames, bins, 2]`.
LogicalResult stftGradients(GradientBuilder &gradients, Operation *op,
                            Value signal, Value window, Value frameStep,
                            int64_t frameLength, Value dy) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = op->getLoc();
  if (frameLength <= 0 && window)
    frameLength = tensorType(window).getDimSize(0);
  if (frameLength <= 0 || ShapedType::isDynamic(frameLength))
    return emitNoGradientError(op) << "a dynamic frame length", failure();
  Value indices = frameIndices(b, loc, dy, frameLength, frameStep);
  // d(loss)/d(windowed frame), [batch, frames, frame_length, channels].
  Value dFrames = adjointDft(gradients, loc, dy, /*axis=*/2,
                             /*inverse=*/false, frameLength);
  if (tensorType(signal).getDimSize(2) == 1)
    dFrames = sliceFront(b, loc, dFrames, /*axis=*/3, 1);
  if (window && gradients.needsGrad(window)) {
    Value frameValues =
        b.create<GatherOp>(loc, signal, indices, b.getI64IntegerAttr(1));
    Value product = b.create<MulOp>(loc, dFrames, frameValues);
    gradients.accumulate(
        window,
        b.create<ReduceSumOp>(loc, product, b.getDenseI64ArrayAttr({0, 1, 3}),
                              b.getBoolAttr(false)));
  }
  if (!gradients.needsGrad(signal))
    return success();
  if (window) {
    Value column =
        b.create<ReshapeOp>(loc, window, ArrayRef<int64_t>{frameLength, 1});
    dFrames = b.create<MulOp>(loc, dFrames, column);
  }
  // Overlapping frames pick a sample more than once: the scatter adds.
  gradients.accumulate(signal,
                       b.create<GatherGradOp>(loc, signal, indices, dFrames,
                                              b.getI64IntegerAttr(1)));
  return success();
}

} // namespace

LogicalResult DftOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  RankedTensorType inputType = tensorType(getInput());
  int64_t rank = inputType.getRank();
  int64_t axis = static_cast<int64_t>(getAxis()); // I64Attr: uint64_t
  if (axis < 0)
    axis += rank;
  int64_t inputLength = inputType.getDimSize(axis);
  if (ShapedType::isDynamic(inputLength))
    return emitNoGradientError(*this)
               << "an input of dynamic size along the axis",
           failure();
  int64_t length =
      getDftLength() > 0 ? static_cast<int64_t>(getDftLength()) : inputLength;
  Value dx =
      adjointDft(gradients, loc, resultGrads[0], axis, getInverse(), length);
  // The forward zero-padded a shorter input and truncated a longer one.
  if (inputLength < length)
    dx = sliceFront(b, loc, dx, axis, inputLength);
  else if (inputLength > length)
    dx = padEnd(b, loc, dx, axis, inputLength - length);
  if (inputType.getDimSize(rank - 1) == 1)
    dx = sliceFront(b, loc, dx, rank - 1, 1);
  gradients.accumulate(getInput(), dx);
  return success();
}

LogicalResult StftOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value step =
      i64Constant(b, getLoc(), {1}, {static_cast<int64_t>(getFrameStep())});
  return stftGradients(gradients, *this, getSignal(), getWindow(), step,
                       static_cast<int64_t>(getFrameLength()), resultGrads[0]);
}

LogicalResult DynamicStftOp::buildGradients(GradientBuilder &gradients,
                                            ArrayRef<Value> resultGrads) {
  return stftGradients(gradients, *this, getSignal(), getWindow(),
                       getFrameStep(), static_cast<int64_t>(getFrameLength()),
                       resultGrads[0]);
}

LogicalResult DetOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  // d det(x) / dx = det(x) * inverse(x)^T (Jacobi's formula); a singular x
  // is refused by the inverse at run time.
  SmallVector<int64_t> keptShape(tensorType(getY()).getShape());
  keptShape.append({1, 1});
  FailureOr<SmallVector<int64_t>> target = getReshapeTarget(keptShape);
  if (failed(target))
    return emitNoGradientError(*this) << "more than one dynamic dimension",
           failure();
  Value scale = b.create<ReshapeOp>(
      loc, b.create<MulOp>(loc, resultGrads[0], getY()), *target);
  int64_t rank = tensorType(getX()).getRank();
  SmallVector<int64_t> swapLast;
  for (int64_t i = 0; i < rank; ++i)
    swapLast.push_back(i);
  std::swap(swapLast[rank - 1], swapLast[rank - 2]);
  Value inverse = b.create<MatrixInverseOp>(loc, getX());
  Value inverseT =
      b.create<TransposeOp>(loc, inverse, b.getDenseI64ArrayAttr(swapLast));
  gradients.accumulate(getX(), b.create<MulOp>(loc, inverseT, scale));
  return success();
}

LogicalResult MatrixInverseOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  // d(X^-1) = -X^-1 dX X^-1, so x's gradient is -Y^T dy Y^T.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value y = getY();
  Value left = b.create<MatMulOp>(loc, y, resultGrads[0], b.getBoolAttr(true),
                                  b.getBoolAttr(false));
  Value product = b.create<MatMulOp>(loc, left, y, b.getBoolAttr(false),
                                     b.getBoolAttr(true));
  gradients.accumulate(getX(), b.create<NegOp>(loc, product));
  return success();
}

} // namespace gopt
