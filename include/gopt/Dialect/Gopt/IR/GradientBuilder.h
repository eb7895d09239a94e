//===- GradientBuilder.h - What gradient rules write with -------*- C++ -*-===//
//
// The ops' gradient rules (DifferentiableOpInterface, GoptInterfaces.td)
// write the backward ops through a GradientBuilder: an OpBuilder placed
// where they go, the bookkeeping of the reverse walk (which values need a
// gradient, the sums), and the pieces several rules share. The walk itself
// is --gopt-autodiff's (lib/Transforms/Autodiff.cpp), which implements the
// bookkeeping; the dialect only states the contract.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GRADIENTBUILDER_H
#define GOPT_DIALECT_GOPT_IR_GRADIENTBUILDER_H

#include "gopt/Dialect/Gopt/IR/GoptDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

namespace gopt {

class GradientBuilder {
public:
  /// Sums and constants are written at `sumLoc` (the function's location),
  /// not at the forward op's: they belong to no single op's backward pass.
  GradientBuilder(mlir::OpBuilder builder, mlir::Location sumLoc)
      : builder(builder), sumLoc(sumLoc) {}
  virtual ~GradientBuilder();

  mlir::OpBuilder &getBuilder() { return builder; }

  /// Whether `value` depends on a parameter and the loss depends on it:
  /// rules write gradients for such operands only.
  virtual bool needsGrad(mlir::Value value) const = 0;
  /// Adds `grad` to the gradient of `value` (the sum of its uses').
  virtual void accumulate(mlir::Value value, mlir::Value grad) = 0;
  /// Whether `grad` is the seed d(loss)/d(loss) = 1 of an unscaled loss.
  virtual bool isUnitSeed(mlir::Value grad) const = 0;
  /// The reverse walk over a region's block (gopt.if's branches): writes,
  /// before `block`'s terminator, the gradients of `wrt` (values of the
  /// block, its arguments) given `outputGrads`, the gradients of `outputs`
  /// (null: none). Returns one gradient per `wrt`: zeros of its type where
  /// none reaches it. The walk is the pass's, with bookkeeping of its own.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  differentiateBlock(mlir::Block &block, mlir::ValueRange outputs,
                     llvm::ArrayRef<mlir::Value> outputGrads,
                     llvm::ArrayRef<mlir::Value> wrt) = 0;

  /// A rank-0 constant of `elementType` (a gradient's: bf16/f16 after
  /// --gopt-mixed-precision, as binary ops take one element type).
  mlir::Value scalarConstant(float value, mlir::Type elementType);
  mlir::Value constantLike(llvm::ArrayRef<int64_t> shape, float value,
                           mlir::Type elementType);
  /// Zeros of `like`'s type; of its run-time shape where that is dynamic.
  mlir::Value zerosLike(mlir::Value like);
  /// `grad` reshaped to `like`'s run-time shape (a dynamic_reshape to
  /// shape(like)), typed as `like`: any number of dynamic dimensions.
  mlir::Value reshapeToShapeOf(mlir::Value grad, mlir::Value like);
  /// `grad * dy`, or `grad` when `dy` is the unit seed: a loss's gradient op
  /// computes d(loss)/d(operand) itself.
  mlir::Value scaleByGrad(mlir::Value grad, mlir::Value dy);
  /// `grad` reshaped to `like`'s type when they differ.
  mlir::FailureOr<mlir::Value> reshapeTo(mlir::Operation *op, mlir::Value grad,
                                         mlir::Value like);
  /// Reduces `grad` (of `op`'s broadcast result shape) to `operand`'s shape.
  mlir::FailureOr<mlir::Value>
  unbroadcast(mlir::Operation *op, mlir::Value grad, mlir::Value operand);
  /// accumulate(operand, unbroadcast(grad)) when `grad` is set and `operand`
  /// needs a gradient: the operands of a broadcasting op.
  mlir::LogicalResult accumulateBroadcast(mlir::Operation *op,
                                          mlir::Value operand,
                                          mlir::Value grad);

protected:
  mlir::OpBuilder builder;
  mlir::Location sumLoc;
};

/// The error of a rule that cannot differentiate `op`; the caller streams
/// the reason: `emitNoGradientError(op) << "a negative alpha"`.
mlir::InFlightDiagnostic emitNoGradientError(mlir::Operation *op);

/// `op`'s attributes without its placement: what a gradient op that takes
/// the forward's attributes gets (the backward is placed on its own).
llvm::SmallVector<mlir::NamedAttribute> forwardAttributes(mlir::Operation *op);

/// The static shape of `shape` as a reshape attribute: a dynamic dimension
/// becomes -1; failure when there is more than one.
mlir::FailureOr<llvm::SmallVector<int64_t>>
getReshapeTarget(llvm::ArrayRef<int64_t> shape);

/// The gradient of an op of GoptMathOps.td's family: its `_grad` op
/// (`GradOp`, which computes dy * f'(x) from the family's
/// `scalarDerivative`) with the forward op's attributes.
mlir::LogicalResult
buildUnaryMathGradient(mlir::Operation *op, mlir::OperationName gradOpName,
                       GradientBuilder &builder,
                       llvm::ArrayRef<mlir::Value> resultGrads);
template <typename GradOp>
mlir::LogicalResult
buildUnaryMathGradient(mlir::Operation *op, GradientBuilder &builder,
                       llvm::ArrayRef<mlir::Value> resultGrads) {
  return buildUnaryMathGradient(
      op, mlir::OperationName(GradOp::getOperationName(), op->getContext()),
      builder, resultGrads);
}

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_GRADIENTBUILDER_H
