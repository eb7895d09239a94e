//===- RnnGradients.cpp - Gradients of the recurrent layers ---------------===//
//
// DifferentiableOpInterface for lstm, gru and rnn (GoptRnnOps.td): each
// writes its gradient op (lstm_grad, gru_grad, rnn_grad), which
// backpropagates through time with the forward's attributes. A result the
// loss does not use gets a rank-0 zero gradient (the ops broadcast it).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

using namespace mlir;

namespace gopt {

namespace {

/// Writes `GradOp` over the forward's float operands, its results'
/// gradients (zero where the loss does not use a result) and its
/// sequence_lens, with the forward's attributes (but not its placement),
/// and accumulates the gradient of each float operand that needs one.
template <typename GradOp>
LogicalResult buildRecurrentGradients(Operation *op, ValueRange floatOperands,
                                      Value sequenceLens,
                                      GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  Type elementType =
      cast<RankedTensorType>(floatOperands.front().getType()).getElementType();
  SmallVector<Value> operands(floatOperands);
  for (Value grad : resultGrads)
    operands.push_back(grad ? grad
                            : gradients.scalarConstant(0.0f, elementType));
  if (sequenceLens)
    operands.push_back(sequenceLens);
  auto grad = gradients.getBuilder().create<GradOp>(
      op->getLoc(), floatOperands.getTypes(), operands, forwardAttributes(op));
  for (auto [operand, operandGrad] :
       llvm::zip(floatOperands, grad->getResults()))
    if (gradients.needsGrad(operand))
      gradients.accumulate(operand, operandGrad);
  return success();
}

} // namespace

LogicalResult LstmOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  return buildRecurrentGradients<LstmGradOp>(
      *this,
      {getX(), getW(), getR(), getB(), getInitialH(), getInitialC(), getP()},
      getSequenceLens(), gradients, resultGrads);
}

LogicalResult GruOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return buildRecurrentGradients<GruGradOp>(
      *this, {getX(), getW(), getR(), getB(), getInitialH()}, getSequenceLens(),
      gradients, resultGrads);
}

LogicalResult RnnOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return buildRecurrentGradients<RnnGradOp>(
      *this, {getX(), getW(), getR(), getB(), getInitialH()}, getSequenceLens(),
      gradients, resultGrads);
}

} // namespace gopt
