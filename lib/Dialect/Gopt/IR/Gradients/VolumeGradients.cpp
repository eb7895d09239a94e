//===- VolumeGradients.cpp - Gradients of the 3-D window ops --------------===//
//
// DifferentiableOpInterface for conv3d, conv3d_transpose, max_pool3d and
// avg_pool3d (GoptVolumeOps.td). conv3d and the pools write their gradient
// ops with the forward's attributes (the kernels resolve SAME and
// ceil_mode as the forward does); conv3d_transpose, conv3d's adjoint,
// takes its input gradient from conv3d and its filter gradient from
// conv3d_grad with the roles of input and output swapped.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

using namespace mlir;

namespace gopt {

namespace {

/// The bias gradient of an NCDHW output: dy summed over all but C.
void accumulateBiasGradient(GradientBuilder &gradients, Location loc,
                            Value bias, Value dy) {
  if (!bias || !gradients.needsGrad(bias))
    return;
  OpBuilder &b = gradients.getBuilder();
  Value db = b.create<ReduceSumOp>(
      loc, dy, b.getDenseI64ArrayAttr({0, 2, 3, 4}), b.getBoolAttr(false));
  gradients.accumulate(bias, db);
}

template <typename GradOp>
LogicalResult buildPool3DGradients(Operation *op, GradientBuilder &gradients,
                                   ArrayRef<Value> resultGrads) {
  Value x = op->getOperand(0);
  Value dx = gradients.getBuilder().create<GradOp>(
      op->getLoc(), TypeRange{x.getType()}, ValueRange{x, resultGrads[0]},
      forwardAttributes(op));
  gradients.accumulate(x, dx);
  return success();
}

} // namespace

LogicalResult Conv3DOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  Value dy = resultGrads[0];
  if (gradients.needsGrad(getInput()) || gradients.needsGrad(getFilter())) {
    auto grad = gradients.getBuilder().create<Conv3DGradOp>(
        getLoc(), TypeRange{getInput().getType(), getFilter().getType()},
        ValueRange{getInput(), getFilter(), dy}, forwardAttributes(*this));
    if (gradients.needsGrad(getInput()))
      gradients.accumulate(getInput(), grad.getDinput());
    if (gradients.needsGrad(getFilter()))
      gradients.accumulate(getFilter(), grad.getDfilter());
  }
  accumulateBiasGradient(gradients, getLoc(), getBias(), dy);
  return success();
}

// conv3d_transpose(x, w) is the adjoint of conv3d(·, w) with the same
// strides, dilations, pads and groups, so x's gradient is that conv3d of
// dy, and w's is conv3d's filter gradient for input dy and output
// gradient x. That conv3d maps dy back to x's size only when
// output_padding < stride.
LogicalResult Conv3DTransposeOp::buildGradients(GradientBuilder &gradients,
                                                ArrayRef<Value> resultGrads) {
  for (auto [pad, stride] : llvm::zip(getOutputPadding(), getStrides()))
    if (pad >= stride)
      return emitNoGradientError(*this)
                 << "output_padding " << pad << " is not below its stride "
                 << stride
                 << " (the conv3d adjoint would give x another element)",
             failure();
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  SmallVector<NamedAttribute> convAttributes = {
      b.getNamedAttr("strides", getStridesAttr()),
      b.getNamedAttr("dilations", getDilationsAttr()),
      b.getNamedAttr("padding", b.getStringAttr("EXPLICIT")),
      b.getNamedAttr("pads", getPadsAttr()),
      b.getNamedAttr("groups", b.getI64IntegerAttr(getGroups()))};
  if (gradients.needsGrad(getInput())) {
    Value dx = b.create<Conv3DOp>(loc, TypeRange{getInput().getType()},
                                  ValueRange{dy, getFilter()}, convAttributes);
    gradients.accumulate(getInput(), dx);
  }
  if (gradients.needsGrad(getFilter())) {
    auto grad = b.create<Conv3DGradOp>(
        loc, TypeRange{dy.getType(), getFilter().getType()},
        ValueRange{dy, getFilter(), getInput()}, convAttributes);
    gradients.accumulate(getFilter(), grad.getDfilter());
  }
  accumulateBiasGradient(gradients, loc, getBias(), dy);
  return success();
}

LogicalResult MaxPool3DOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  return buildPool3DGradients<MaxPool3DGradOp>(*this, gradients, resultGrads);
}

LogicalResult AvgPool3DOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  return buildPool3DGradients<AvgPool3DGradOp>(*this, gradients, resultGrads);
}

} // namespace gopt
