//===- LossGradients.cpp - Gradients of the losses ------------------------===//
//
// DifferentiableOpInterface for the losses of GoptTrainingOps.td: their
// gradient ops compute d(loss)/d(input), scaled by the loss's gradient
// unless that is the unit seed (the loss differentiated directly).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

using namespace mlir;

namespace gopt {

LogicalResult
SoftmaxCrossEntropyOp::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  if (gradients.needsGrad(getLabels()))
    return emitNoGradientError(*this) << "gradient with respect to labels",
           failure();
  Value d = gradients.getBuilder().create<SoftmaxCrossEntropyGradOp>(
      getLoc(), getLogits(), getLabels());
  gradients.accumulate(getLogits(), gradients.scaleByGrad(d, resultGrads[0]));
  return success();
}

LogicalResult MseLossOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value d = gradients.scaleByGrad(
      b.create<MseLossGradOp>(getLoc(), getPrediction(), getTarget()),
      resultGrads[0]);
  if (gradients.needsGrad(getPrediction()))
    gradients.accumulate(getPrediction(), d);
  if (gradients.needsGrad(getTarget()))
    gradients.accumulate(getTarget(), b.create<NegOp>(getLoc(), d));
  return success();
}

} // namespace gopt
