//===- NormGradients.cpp - Gradients of the normalizations ----------------===//
//
// DifferentiableOpInterface for layer_norm and instance_norm, written with
// reductions and elementwise ops: the normalized value is recomputed from x
// (two reductions) rather than saved by the forward kernel, which keeps the
// forward ops' kernels as they are. With x̂ = (x - mean) * rstd over the
// normalized axes and g = dy * scale,
//   dx = rstd * (g - mean(g) - x̂ * mean(g * x̂)),
//   dscale = Σ dy * x̂,  dbias = Σ dy  (over the broadcast dimensions).
// lrn's likewise recomputes its denominator from x (see LrnOp's rule).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <limits>

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

/// The sums of `z` over the windows [c - before, c + after] of `axis`
/// (clipped to the tensor), for every c: differences of a cumulative sum of
/// z zero-padded by before + 1 and after, so that any window size costs
/// the same few elementwise passes and no reshape is needed.
Value windowSums(OpBuilder &b, Location loc, Value z, int64_t axis,
                 int64_t before, int64_t after) {
  auto type = cast<RankedTensorType>(z.getType());
  int64_t rank = type.getRank(), size = type.getDimSize(axis);
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[2 * axis] = before + 1;
  pads[2 * axis + 1] = after;
  Value padded =
      b.create<PadOp>(loc, z, b.getDenseI64ArrayAttr(pads),
                      b.getStringAttr("constant"), b.getF32FloatAttr(0.0f));
  Value sums = b.create<CumSumOp>(loc, padded, b.getI64IntegerAttr(axis),
                                  b.getBoolAttr(false), b.getBoolAttr(false));
  // Window c ends at padded index c + before + after + 1 and starts after
  // padded index c.
  SmallVector<int64_t> starts(rank, 0), steps(rank, 1),
      ends(rank, std::numeric_limits<int64_t>::max());
  starts[axis] = before + after + 1;
  Value upTo = b.create<SliceOp>(loc, sums, b.getDenseI64ArrayAttr(starts),
                                 b.getDenseI64ArrayAttr(ends),
                                 b.getDenseI64ArrayAttr(steps));
  starts[axis] = 0;
  ends[axis] = size;
  Value below = b.create<SliceOp>(loc, sums, b.getDenseI64ArrayAttr(starts),
                                  b.getDenseI64ArrayAttr(ends),
                                  b.getDenseI64ArrayAttr(steps));
  return b.create<SubOp>(loc, upTo, below);
}

} // namespace

// y_c = x_c * s_c^-beta with s_c = bias + alpha / size * Σ_{k in win(c)}
// x_k^2 and win(c) = [c - lo, c + hi], so
//   dx_k = dy_k * s_k^-beta
//          - 2 * beta * alpha / size * x_k * Σ_{c : k in win(c)} t_c,
//   t_c = dy_c * x_c * s_c^(-beta - 1),
// where the c with k in win(c) are [k - hi, k + lo]: the mirrored window.
LogicalResult LrnOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  auto xType = cast<RankedTensorType>(getX().getType());
  Type element = xType.getElementType();
  int64_t axis =
      shape::normalizationChannelAxis(getDataFormat().str(), xType.getRank());
  if (xType.isDynamicDim(axis))
    return emitNoGradientError(*this) << "a dynamic channel dimension",
           failure();
  int64_t size = static_cast<int64_t>(getSize());
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  float alpha = getAlpha().convertToFloat(), beta = getBeta().convertToFloat();
  Value x = getX(), dy = resultGrads[0];
  Value sumSquares =
      windowSums(b, loc, b.create<MulOp>(loc, x, x), axis, lo, hi);
  Value s = b.create<AddOp>(
      loc,
      b.create<MulOp>(loc, sumSquares,
                      gradients.scalarConstant(alpha / size, element)),
      gradients.scalarConstant(getBias().convertToFloat(), element));
  Value scale =
      b.create<PowOp>(loc, s, gradients.scalarConstant(-beta, element));
  Value t = b.create<DivOp>(
      loc, b.create<MulOp>(loc, b.create<MulOp>(loc, dy, x), scale), s);
  Value spread = b.create<MulOp>(
      loc, b.create<MulOp>(loc, windowSums(b, loc, t, axis, hi, lo), x),
      gradients.scalarConstant(2.0f * beta * alpha / size, element));
  gradients.accumulate(
      x, b.create<SubOp>(loc, b.create<MulOp>(loc, dy, scale), spread));
  return success();
}

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
