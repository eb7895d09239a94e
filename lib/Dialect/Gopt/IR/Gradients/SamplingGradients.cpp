//===- SamplingGradients.cpp - Gradients of the sampling ops -------------===//
//
// DifferentiableOpInterface for grid_sample (with respect to x and grid),
// roi_align (with respect to x; its regions are refused) and max_roi_pool
// (with respect to x; its rounded regions have none): each writes its
// gradient op (GoptSamplingOps.td) with the forward's attributes.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

using namespace mlir;

namespace gopt {

LogicalResult GridSampleOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  auto grad = gradients.getBuilder().create<GridSampleGradOp>(
      getLoc(), TypeRange{getX().getType(), getGrid().getType()},
      ValueRange{getX(), getGrid(), resultGrads[0]}, forwardAttributes(*this));
  if (gradients.needsGrad(getX()))
    gradients.accumulate(getX(), grad.getDx());
  if (gradients.needsGrad(getGrid()))
    gradients.accumulate(getGrid(), grad.getDgrid());
  return success();
}

LogicalResult RoiAlignOp::buildGradients(GradientBuilder &gradients,
                                         ArrayRef<Value> resultGrads) {
  // The regions' gradient (how bins move with their corners) is not
  // written; the usual detector trains through x with fixed proposals.
  if (gradients.needsGrad(getRois()))
    return emitNoGradientError(*this)
               << "the loss depends on its rois through a parameter (only "
                  "the gradient with respect to x is implemented)",
           failure();
  if (!gradients.needsGrad(getX()))
    return success();
  Value dx = gradients.getBuilder().create<RoiAlignGradOp>(
      getLoc(), TypeRange{getX().getType()},
      ValueRange{getX(), getRois(), getBatchIndices(), resultGrads[0]},
      forwardAttributes(*this));
  gradients.accumulate(getX(), dx);
  return success();
}

LogicalResult MaxRoiPoolOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  // The rounded corners are piecewise constant: no gradient reaches rois.
  if (!gradients.needsGrad(getX()))
    return success();
  Value dx = gradients.getBuilder().create<MaxRoiPoolGradOp>(
      getLoc(), TypeRange{getX().getType()},
      ValueRange{getX(), getRois(), resultGrads[0]}, forwardAttributes(*this));
  gradients.accumulate(getX(), dx);
  return success();
}

} // namespace gopt
