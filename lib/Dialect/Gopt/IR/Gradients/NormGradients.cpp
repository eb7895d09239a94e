//===- NormGradients.cpp - Gradients of layer and instance norm -----------===//
//
// DifferentiableOpInterface for layer_norm and instance_norm, written with
// reductions and elementwise ops: the normalized value is recomputed from x
// (two reductions) rather than saved by the forward kernel, which keeps the
// forward ops' kernels as they are. With x̂ = (x - mean) * rstd over the
// normalized axes and g = dy * scale,
//   dx = rstd * (g - mean(g) - x̂ * mean(g * x̂)),
//   dscale = Σ dy * x̂,  dbias = Σ dy  (over the broadcast dimensions).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Shape/ShapeFunctions.h"

using namespace mlir;

namespace gopt {

namespace {

/// The pieces both norms share, over `axes` of x.
struct Normalized {
  Value xhat, rstd;
};

Normalized normalize(OpBuilder &b, GradientBuilder &gradients, Location loc,
                     Value x, ArrayRef<int64_t> axes, float epsilon) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  BoolAttr keep = b.getBoolAttr(true);
  Value mean = b.create<ReduceMeanOp>(loc, x, axesAttr, keep);
  Value centered = b.create<SubOp>(loc, x, mean);
  Value variance = b.create<ReduceMeanOp>(
      loc, b.create<MulOp>(loc, centered, centered), axesAttr, keep);
  Value rstd = b.create<RsqrtOp>(
      loc, b.create<AddOp>(loc, variance,
                           gradients.scalarConstant(epsilon, element)));
  return {b.create<MulOp>(loc, centered, rstd), rstd};
}

/// dx from g = dy * scale (already broadcast to x's shape).
Value normalizedInputGrad(OpBuilder &b, Location loc, Value g,
                          const Normalized &n, ArrayRef<int64_t> axes) {
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  BoolAttr keep = b.getBoolAttr(true);
  Value meanG = b.create<ReduceMeanOp>(loc, g, axesAttr, keep);
  Value meanGX = b.create<ReduceMeanOp>(loc, b.create<MulOp>(loc, g, n.xhat),
                                        axesAttr, keep);
  Value centered = b.create<SubOp>(loc, b.create<SubOp>(loc, g, meanG),
                                   b.create<MulOp>(loc, n.xhat, meanGX));
  return b.create<MulOp>(loc, centered, n.rstd);
}

/// Fails unless every dimension in `axes` is static: the means' divisor.
LogicalResult requireStaticAxes(Operation *op, RankedTensorType type,
                                ArrayRef<int64_t> axes) {
  for (int64_t axis : axes)
    if (type.isDynamicDim(axis))
      return emitNoGradientError(op)
                 << "a normalization over dynamic dimension " << axis,
             failure();
  return success();
}

} // namespace

LogicalResult LayerNormOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  auto xType = cast<RankedTensorType>(getX().getType());
  int64_t rank = xType.getRank();
  // I64Attr's getter is unsigned: the sign comes back through int64_t.
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t first = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> axes;
  for (int64_t i = first; i < rank; ++i)
    axes.push_back(i);
  if (failed(requireStaticAxes(*this, xType, axes)))
    return failure();
  Value dy = resultGrads[0];
  Normalized n =
      normalize(b, gradients, loc, getX(), axes, getEpsilon().convertToFloat());
  // scale and bias broadcast numpy-style to x: their gradients reduce back.
  if (gradients.needsGrad(getScale()) &&
      failed(gradients.accumulateBroadcast(*this, getScale(),
                                           b.create<MulOp>(loc, dy, n.xhat))))
    return failure();
  if (failed(gradients.accumulateBroadcast(*this, getBias(), dy)))
    return failure();
  if (gradients.needsGrad(getX()))
    gradients.accumulate(
        getX(), normalizedInputGrad(
                    b, loc, b.create<MulOp>(loc, dy, getScale()), n, axes));
  return success();
}

LogicalResult InstanceNormOp::buildGradients(GradientBuilder &gradients,
                                             ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  auto xType = cast<RankedTensorType>(getX().getType());
  int64_t rank = xType.getRank();
  int64_t channelAxis =
      shape::normalizationChannelAxis(getDataFormat().str(), rank);
  // Statistics over the spatial axes; scale and bias are per channel, so
  // they broadcast through a [1, C, 1, ...]-style reshape.
  SmallVector<int64_t> spatial, allButChannel, channelShape(rank, 1);
  for (int64_t i = 0; i < rank; ++i) {
    if (i != channelAxis)
      allButChannel.push_back(i);
    if (i != 0 && i != channelAxis)
      spatial.push_back(i);
  }
  if (failed(requireStaticAxes(*this, xType, spatial)))
    return failure();
  if (xType.isDynamicDim(channelAxis))
    return emitNoGradientError(*this) << "a dynamic channel dimension",
           failure();
  channelShape[channelAxis] = xType.getDimSize(channelAxis);
  Value dy = resultGrads[0];
  Normalized n = normalize(b, gradients, loc, getX(), spatial,
                           getEpsilon().convertToFloat());
  DenseI64ArrayAttr perChannel = b.getDenseI64ArrayAttr(allButChannel);
  BoolAttr drop = b.getBoolAttr(false);
  if (gradients.needsGrad(getScale()))
    gradients.accumulate(
        getScale(), b.create<ReduceSumOp>(loc, b.create<MulOp>(loc, dy, n.xhat),
                                          perChannel, drop));
  if (gradients.needsGrad(getBias()))
    gradients.accumulate(getBias(),
                         b.create<ReduceSumOp>(loc, dy, perChannel, drop));
  if (gradients.needsGrad(getX())) {
    Value scale = b.create<ReshapeOp>(loc, getScale(), channelShape);
    gradients.accumulate(
        getX(), normalizedInputGrad(b, loc, b.create<MulOp>(loc, dy, scale), n,
                                    spatial));
  }
  return success();
}

} // namespace gopt
