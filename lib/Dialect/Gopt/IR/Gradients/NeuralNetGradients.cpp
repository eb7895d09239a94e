//===- NeuralNetGradients.cpp - Gradients of the network layers -----------===//
//
// DifferentiableOpInterface for convolution, matmul, bias_add, pooling,
// batch_norm, softmax and the reductions. Where the gradient needs a
// kernel of its own (conv2d, max_pool, avg_pool, batch_norm) the rule
// writes the gradient ops of GoptTrainingOps.td.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

using namespace mlir;

namespace gopt {

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// reduce_sum and reduce_mean: dy broadcast back over the reduced axes.
LogicalResult reduceGradients(GradientBuilder &gradients, Operation *op,
                              ArrayRef<int64_t> axesAttr, bool keepDims,
                              bool mean, Value dy) {
  OpBuilder &b = gradients.getBuilder();
  Value x = op->getOperand(0);
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank();
  SmallVector<bool> reduced(rank, axesAttr.empty());
  for (int64_t axis : axesAttr)
    reduced[axis < 0 ? axis + rank : axis] = true;
  // dy broadcast back over the reduced axes: reshape to the keep-dims shape,
  // then multiply by a constant that has the reduced extents (1 or 1/count).
  SmallVector<int64_t> keptShape, spread;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = xType.getDimSize(i);
    if (reduced[i] && ShapedType::isDynamic(d))
      return emitNoGradientError(op)
                 << "a reduction over dynamic dimension " << i,
             failure();
    keptShape.push_back(reduced[i] ? 1 : d);
    spread.push_back(reduced[i] ? d : 1);
    if (reduced[i])
      count *= d;
  }
  Value kept = dy;
  if (!keepDims) {
    FailureOr<SmallVector<int64_t>> target = getReshapeTarget(keptShape);
    if (failed(target))
      return emitNoGradientError(op) << "more than one dynamic dimension",
             failure();
    kept = b.create<ReshapeOp>(op->getLoc(), dy, *target);
  }
  Value dx =
      b.create<MulOp>(op->getLoc(), kept,
                      gradients.constantLike(spread, mean ? 1.0f / count : 1.0f,
                                             xType.getElementType()));
  gradients.accumulate(x, dx);
  return success();
}

} // namespace

LogicalResult Conv2DOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value dz = dy;
  if (getActivation() == "relu")
    dz = b.create<ReluGradOp>(loc, dy, getOutput());
  else if (getActivation() != "none")
    return emitNoGradientError(*this)
           << "fused activation '" << getActivation()
           << "' (only none and relu are differentiated)";

  RankedTensorType inputType = tensorType(getInput());
  FailureOr<Layout> layout =
      parseDataFormat(getDataFormat(), ShapeError(loc, "gopt.conv2d"));
  if (failed(layout))
    return failure();
  // Explicit pads for the gradient ops: SAME/VALID resolved at the input's
  // (static) spatial size.
  SmallVector<int64_t, 4> pads = getPadsOrDefault();
  if (getPadding() != "EXPLICIT") {
    if (inputType.isDynamicDim(layout->h) || inputType.isDynamicDim(layout->w))
      return emitNoGradientError(*this) << "padding \"" << getPadding()
                                        << "\" with dynamic spatial dimensions",
             failure();
    RankedTensorType filterType = tensorType(getFilter());
    bool oihw = getFilterFormat() == "OIHW";
    WindowParams window;
    window.kernel = {filterType.getDimSize(oihw ? 2 : 0),
                     filterType.getDimSize(oihw ? 3 : 1)};
    window.strides = toDims(getStridesOrDefault());
    window.dilations = toDims(getDilationsOrDefault());
    window.padding = getPadding();
    window.pads = toDims(pads);
    auto [top, bottom] =
        resolvePadding(inputType.getDimSize(layout->h), window, 0);
    auto [left, right] =
        resolvePadding(inputType.getDimSize(layout->w), window, 1);
    pads = {top, bottom, left, right};
  }
  auto strides = b.getDenseI64ArrayAttr(getStridesOrDefault());
  auto dilations = b.getDenseI64ArrayAttr(getDilationsOrDefault());
  auto padsAttr = b.getDenseI64ArrayAttr(pads);

  if (gradients.needsGrad(getInput())) {
    FailureOr<SmallVector<int64_t>> inputShape =
        getReshapeTarget(inputType.getShape());
    if (failed(inputShape) || (inputType.getShape().size() == 4 &&
                               llvm::any_of(inputType.getShape().drop_front(),
                                            ShapedType::isDynamic)))
      return emitNoGradientError(*this)
                 << "an input with dynamic dimensions other than the "
                    "batch: "
                 << inputType,
             failure();
    Value dx = b.create<Conv2DBackpropInputOp>(
        loc, inputType, dz, getFilter(), b.getDenseI64ArrayAttr(*inputShape),
        strides, dilations, padsAttr, getGroupsAttr(), getDataFormatAttr(),
        getFilterFormatAttr());
    gradients.accumulate(getInput(), dx);
  }
  if (gradients.needsGrad(getFilter())) {
    RankedTensorType filterType = tensorType(getFilter());
    Value dw = b.create<Conv2DBackpropFilterOp>(
        loc, filterType, getInput(), dz,
        b.getDenseI64ArrayAttr(filterType.getShape()), strides, dilations,
        padsAttr, getGroupsAttr(), getDataFormatAttr(), getFilterFormatAttr());
    gradients.accumulate(getFilter(), dw);
  }
  if (getBias() && gradients.needsGrad(getBias())) {
    SmallVector<int64_t> axes = {layout->n, layout->h, layout->w};
    llvm::sort(axes);
    Value db = b.create<ReduceSumOp>(loc, dz, b.getDenseI64ArrayAttr(axes),
                                     b.getBoolAttr(false));
    gradients.accumulate(getBias(), db);
  }
  return success();
}

/// conv2d_transpose is the adjoint of the conv2d with its filter (ODS:
/// the filter of the forward conv whose input gradient it computes), so its
/// input gradient is that conv2d of dy and its filter gradient is that
/// conv's filter gradient with dy as the input and x as the output
/// gradient. The pads crop the same rows in both directions; the
/// output_padding rows (bias only) fall outside every window of the conv
/// as long as output_padding < strides, which keeps dx at x's size.
LogicalResult Conv2DTransposeOp::buildGradients(GradientBuilder &gradients,
                                                ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  for (auto [extra, stride] : llvm::zip(getOutputPadding(), getStrides()))
    if (extra >= stride)
      return emitNoGradientError(*this)
                 << "output_padding " << extra << " >= stride " << stride,
             failure();
  FailureOr<Layout> layout = parseDataFormat(
      getDataFormat(), ShapeError(loc, "gopt.conv2d_transpose"));
  if (failed(layout))
    return failure();
  if (gradients.needsGrad(getInput())) {
    Value dx = b.create<Conv2DOp>(
        loc, dy, getFilter(), Value(), getStridesAttr(), getDilationsAttr(),
        b.getStringAttr("EXPLICIT"), getPadsAttr(), getGroupsAttr(),
        getDataFormatAttr(), getFilterFormatAttr(), b.getStringAttr("none"));
    gradients.accumulate(getInput(), dx);
  }
  if (gradients.needsGrad(getFilter())) {
    RankedTensorType filterType = tensorType(getFilter());
    Value dw = b.create<Conv2DBackpropFilterOp>(
        loc, filterType, dy, getInput(),
        b.getDenseI64ArrayAttr(filterType.getShape()), getStridesAttr(),
        getDilationsAttr(), getPadsAttr(), getGroupsAttr(), getDataFormatAttr(),
        getFilterFormatAttr());
    gradients.accumulate(getFilter(), dw);
  }
  if (getBias() && gradients.needsGrad(getBias())) {
    SmallVector<int64_t> axes = {layout->n, layout->h, layout->w};
    llvm::sort(axes);
    gradients.accumulate(
        getBias(), b.create<ReduceSumOp>(loc, dy, b.getDenseI64ArrayAttr(axes),
                                         b.getBoolAttr(false)));
  }
  return success();
}

LogicalResult MatMulOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value dy = resultGrads[0];
  Value a = getA(), bv = getB();
  if (tensorType(a).getRank() < 2 || tensorType(bv).getRank() < 2)
    return emitNoGradientError(*this)
               << "a rank-1 operand (only matrices and batches of "
                  "them are differentiated)",
           failure();
  Location loc = getLoc();
  bool ta = getTransposeA(), tb = getTransposeB();
  auto mm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<MatMulOp>(loc, x, y, b.getBoolAttr(tx), b.getBoolAttr(ty));
  };
  // y = op(A) op(B) with op = transpose or not. Batched operands use the
  // same formulas per batch (matmul broadcasts batch dims); an operand
  // broadcast over batch dims (fewer of them, or size 1) sums its
  // gradient over those dims.
  if (gradients.needsGrad(a)) {
    Value da = !ta ? (!tb ? mm(dy, bv, false, true) : mm(dy, bv, false, false))
                   : (!tb ? mm(bv, dy, false, true) : mm(bv, dy, true, true));
    if (failed(gradients.accumulateBroadcast(*this, a, da)))
      return failure();
  }
  if (gradients.needsGrad(bv)) {
    Value db = !tb ? (!ta ? mm(a, dy, true, false) : mm(a, dy, false, false))
                   : (!ta ? mm(dy, a, true, false) : mm(dy, a, true, true));
    if (failed(gradients.accumulateBroadcast(*this, bv, db)))
      return failure();
  }
  return success();
}

LogicalResult BiasAddOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value dy = resultGrads[0];
  if (gradients.needsGrad(getX()))
    gradients.accumulate(getX(), dy);
  if (gradients.needsGrad(getBias())) {
    int64_t rank = tensorType(getX()).getRank();
    int64_t channel = getChannelAxis(getDataFormat(), rank);
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < rank; ++i)
      if (i != channel)
        axes.push_back(i);
    gradients.accumulate(getBias(),
                         b.create<ReduceSumOp>(getLoc(), dy,
                                               b.getDenseI64ArrayAttr(axes),
                                               b.getBoolAttr(false)));
  }
  return success();
}

LogicalResult MaxPoolOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  RankedTensorType xType = tensorType(getX());
  FailureOr<Layout> layout =
      parseDataFormat(getDataFormat(), ShapeError(getLoc(), "gopt.max_pool"));
  if (failed(layout))
    return failure();
  SmallVector<int64_t, 4> pads = getPadsOrDefault();
  SmallVector<int64_t, 2> strides = getStridesOrDefault();
  ArrayRef<int64_t> kernel = getKernel();
  bool needStatic = getPadding() != "EXPLICIT" || getCeilMode();
  if (needStatic &&
      (xType.isDynamicDim(layout->h) || xType.isDynamicDim(layout->w)))
    return emitNoGradientError(*this)
               << "SAME padding or ceil_mode with dynamic spatial "
                  "dimensions",
           failure();
  WindowParams window;
  window.kernel = toDims(kernel);
  window.strides = toDims(strides);
  window.dilations = {1, 1};
  window.padding = getPadding();
  window.pads = toDims(pads);
  window.ceilMode = getCeilMode();
  if (getPadding() != "EXPLICIT") {
    auto [top, bottom] = resolvePadding(xType.getDimSize(layout->h), window, 0);
    auto [left, right] = resolvePadding(xType.getDimSize(layout->w), window, 1);
    pads = {top, bottom, left, right};
  }
  if (getCeilMode()) {
    // ceil_mode's extra last window reads past the end: pad bottom/right
    // so the floor-mode output size matches (padding never wins a max).
    RankedTensorType yType = tensorType(getY());
    int64_t dims[2] = {layout->h, layout->w};
    for (int i = 0; i < 2; ++i) {
      int64_t in = xType.getDimSize(dims[i]);
      int64_t out = yType.getDimSize(dims[i]);
      int64_t need = (out - 1) * strides[i] + kernel[i];
      int64_t have = in + pads[2 * i] + pads[2 * i + 1];
      if (need > have)
        pads[2 * i + 1] += need - have;
    }
  }
  Value dx = b.create<MaxPoolGradOp>(
      getLoc(), xType, getX(), resultGrads[0], getKernelAttr(),
      b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
      getDataFormatAttr());
  gradients.accumulate(getX(), dx);
  return success();
}

// avg_pool_grad takes avg_pool's attributes as they are: its divisor is
// the forward's (count_include_pad, ceil_mode), which resolving SAME or
// ceil_mode into explicit pads would change.
LogicalResult AvgPoolOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  Value dx = gradients.getBuilder().create<AvgPoolGradOp>(
      getLoc(), getX().getType(), getX(), resultGrads[0], getKernelAttr(),
      getStridesAttr(), getPaddingAttr(), getPadsAttr(), getDataFormatAttr(),
      getCeilModeAttr(), getCountIncludePadAttr());
  gradients.accumulate(getX(), dx);
  return success();
}

// resize_grad takes resize's attributes as they are: it replays the
// forward's taps, so every mode (nearest, linear, cubic) has its gradient.
LogicalResult ResizeOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  Value dx = gradients.getBuilder().create<ResizeGradOp>(
      getLoc(), getInput().getType(), getInput(), resultGrads[0],
      getScalesAttr(), getSizesAttr(), getRoiAttr(), getModeAttr(),
      getCoordinateTransformationModeAttr(), getNearestModeAttr(),
      getCubicCoeffAAttr(), getExcludeOutsideAttr(),
      getExtrapolationValueAttr(), getDataFormatAttr(), getAntialiasAttr());
  gradients.accumulate(getInput(), dx);
  return success();
}

LogicalResult GlobalAvgPoolOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  RankedTensorType xType = tensorType(getX());
  FailureOr<Layout> layout = parseDataFormat(
      getDataFormat(), ShapeError(getLoc(), "gopt.global_avg_pool"));
  if (failed(layout))
    return failure();
  int64_t h = xType.getDimSize(layout->h), w = xType.getDimSize(layout->w);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(w))
    return emitNoGradientError(*this) << "dynamic spatial dimensions",
           failure();
  SmallVector<int64_t> spread(4, 1);
  spread[layout->h] = h;
  spread[layout->w] = w;
  gradients.accumulate(getX(),
                       gradients.getBuilder().create<MulOp>(
                           getLoc(), resultGrads[0],
                           gradients.constantLike(spread, 1.0f / (h * w),
                                                  xType.getElementType())));
  return success();
}

LogicalResult SoftmaxOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  // y * (dy - sum(dy * y, axis))
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  auto axis = b.getDenseI64ArrayAttr({static_cast<int64_t>(getAxis())});
  Value dot = b.create<ReduceSumOp>(loc, b.create<MulOp>(loc, dy, getY()), axis,
                                    b.getBoolAttr(true));
  gradients.accumulate(
      getX(), b.create<MulOp>(loc, getY(), b.create<SubOp>(loc, dy, dot)));
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  // dy - exp(y) * sum(dy, axis)
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  auto axis = b.getDenseI64ArrayAttr({static_cast<int64_t>(getAxis())});
  Value sum = b.create<ReduceSumOp>(loc, dy, axis, b.getBoolAttr(true));
  gradients.accumulate(
      getX(),
      b.create<SubOp>(loc, dy,
                      b.create<MulOp>(loc, b.create<ExpOp>(loc, getY()), sum)));
  return success();
}

LogicalResult ReduceSumOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  return reduceGradients(gradients, *this, getAxes(), getKeepDims(),
                         /*mean=*/false, resultGrads[0]);
}

namespace {

/// reduce_max and reduce_min: dy goes to the elements equal to the result,
/// split evenly among ties (TensorFlow's rule; the sum is then dy).
LogicalResult extremumGradients(GradientBuilder &gradients, Operation *op,
                                ArrayRef<int64_t> axesAttr, bool keepDims,
                                Value result, Value dy) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  RankedTensorType xType = tensorType(x);
  if (!isa<FloatType>(xType.getElementType()))
    return emitNoGradientError(op) << "an integer input", failure();
  int64_t rank = xType.getRank();
  SmallVector<int64_t> axes(axesAttr.begin(), axesAttr.end());
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  SmallVector<int64_t> keptShape(xType.getShape().begin(),
                                 xType.getShape().end());
  for (int64_t &axis : axes) {
    axis = axis < 0 ? axis + rank : axis;
    keptShape[axis] = 1;
  }
  Value keptDy = dy, keptResult = result;
  if (!keepDims) {
    FailureOr<SmallVector<int64_t>> target = getReshapeTarget(keptShape);
    if (failed(target))
      return emitNoGradientError(op) << "more than one dynamic dimension",
             failure();
    keptDy = b.create<ReshapeOp>(loc, dy, *target);
    keptResult = b.create<ReshapeOp>(loc, result, *target);
  }
  Value hit =
      b.create<CastOp>(loc, xType, b.create<EqualOp>(loc, x, keptResult));
  Value ties = b.create<ReduceSumOp>(loc, hit, b.getDenseI64ArrayAttr(axes),
                                     b.getBoolAttr(true));
  gradients.accumulate(
      x, b.create<MulOp>(loc, hit, b.create<DivOp>(loc, keptDy, ties)));
  return success();
}

} // namespace

LogicalResult ReduceMaxOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  return extremumGradients(gradients, *this, getAxes(), getKeepDims(), getY(),
                           resultGrads[0]);
}

LogicalResult ReduceMinOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  return extremumGradients(gradients, *this, getAxes(), getKeepDims(), getY(),
                           resultGrads[0]);
}

LogicalResult ReduceMeanOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  return reduceGradients(gradients, *this, getAxes(), getKeepDims(),
                         /*mean=*/true, resultGrads[0]);
}

// Each element's derivative is the product of the others: y / x where no
// element of its group is zero; with one zero, the product of the rest at
// the zero and 0 elsewhere; with more, 0 everywhere.
LogicalResult ReduceProdOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value x = getX(), dy = resultGrads[0];
  RankedTensorType xType = tensorType(x);
  Type element = xType.getElementType();
  if (!isa<FloatType>(element))
    return emitNoGradientError(*this) << "an integer input", failure();
  int64_t rank = xType.getRank();
  SmallVector<int64_t> axes(getAxes().begin(), getAxes().end());
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  SmallVector<int64_t> keptShape(xType.getShape().begin(),
                                 xType.getShape().end());
  for (int64_t &axis : axes) {
    axis = axis < 0 ? axis + rank : axis;
    keptShape[axis] = 1;
  }
  if (!getKeepDims()) {
    FailureOr<SmallVector<int64_t>> target = getReshapeTarget(keptShape);
    if (failed(target))
      return emitNoGradientError(*this) << "more than one dynamic dimension",
             failure();
    dy = b.create<ReshapeOp>(loc, dy, *target);
  }
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  BoolAttr keep = b.getBoolAttr(true);
  Value zero = gradients.scalarConstant(0.0f, element);
  Value one = gradients.scalarConstant(1.0f, element);
  Value isZero = b.create<EqualOp>(loc, x, zero);
  Value zeros = b.create<ReduceSumOp>(loc, b.create<CastOp>(loc, xType, isZero),
                                      axesAttr, keep);
  Value nonZero = b.create<WhereOp>(loc, isZero, one, x);
  Value others = b.create<ReduceProdOp>(loc, nonZero, axesAttr, keep);
  Value atNonZero =
      b.create<WhereOp>(loc, b.create<EqualOp>(loc, zeros, zero),
                        b.create<DivOp>(loc, others, nonZero), zero);
  Value atZero =
      b.create<WhereOp>(loc, b.create<EqualOp>(loc, zeros, one), others, zero);
  gradients.accumulate(
      x, b.create<MulOp>(loc, b.create<WhereOp>(loc, isZero, atZero, atNonZero),
                         dy));
  return success();
}

LogicalResult BatchNormOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  if (!getTraining())
    return emitNoGradientError(*this)
               << "inference-form batch_norm (train with "
                  "training = true, which normalizes with batch "
                  "statistics)",
           failure();
  for (Value statGrad : resultGrads.drop_front())
    if (statGrad)
      return emitNoGradientError(*this)
                 << "the loss depends on its batch statistics "
                    "(only y is differentiated)",
             failure();
  auto grad = gradients.getBuilder().create<BatchNormGradOp>(
      getLoc(), resultGrads[0], getX(), getScale(), getStatistics()[0],
      getStatistics()[1], getEpsilonAttr(), getDataFormatAttr(),
      getCrossReplicaAttr());
  if (gradients.needsGrad(getX()))
    gradients.accumulate(getX(), grad.getDx());
  if (gradients.needsGrad(getScale()))
    gradients.accumulate(getScale(), grad.getDscale());
  if (gradients.needsGrad(getOffset()))
    gradients.accumulate(getOffset(), grad.getDoffset());
  if (gradients.needsGrad(getMean()) || gradients.needsGrad(getVariance()))
    return emitNoGradientError(*this)
               << "trainable running statistics (mean and "
                  "variance are not parameters)",
           failure();
  return success();
}

} // namespace gopt
