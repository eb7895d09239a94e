//===- TrainingAttrs.h - Argument/result attributes of training -*- C++ -*-===//
//
// A training step is a function `(params, optimizer state, batch) -> (new
// params, new state, loss)`; these discardable attributes on its arguments
// and results say which is which. The training passes write them and the
// plan lowering turns them into runtime state (plan.proto's StateBinding).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_DIALECT_GOPT_IR_TRAININGATTRS_H
#define GOPT_DIALECT_GOPT_IR_TRAININGATTRS_H

#include "llvm/ADT/StringRef.h"

namespace gopt::attrs {
/// Argument and result name (also used by importers and the lowering).
constexpr llvm::StringLiteral kName = "gopt.name";
/// Argument: "param" (trained), "optimizer" (optimizer state) or "buffer"
/// (updated by the step itself, e.g. batch-norm running statistics):
/// lowered to runtime state rather than an input.
constexpr llvm::StringLiteral kState = "gopt.state";
constexpr llvm::StringLiteral kStateParam = "param";
constexpr llvm::StringLiteral kStateOptimizer = "optimizer";
constexpr llvm::StringLiteral kStateBuffer = "buffer";
/// Argument: the state's initial value (an ElementsAttr); zeros if absent.
constexpr llvm::StringLiteral kInitialValue = "gopt.initial_value";
/// On a gopt.constant the model states as fixed (an ONNX Constant node):
/// gopt-lift-params never makes it a parameter.
constexpr llvm::StringLiteral kFixed = "gopt.fixed";
/// Result: the gradient of the loss with respect to the named parameter.
constexpr llvm::StringLiteral kGradientOf = "gopt.gradient_of";
/// Result: the new value of the named state argument, written back after
/// each run.
constexpr llvm::StringLiteral kUpdates = "gopt.updates";
/// Result: the loss (and, after autodiff, its gradients) is scaled by the
/// named f32 scalar state argument (--gopt-loss-scaling).
constexpr llvm::StringLiteral kLossScale = "gopt.loss_scale";
/// Argument (the loss scale): dynamic loss scaling's parameters, a
/// dictionary {growth_interval, growth_factor, backoff_factor}; absent for
/// a fixed scale.
constexpr llvm::StringLiteral kLossScaleUpdate = "gopt.loss_scale_update";
} // namespace gopt::attrs

#endif // GOPT_DIALECT_GOPT_IR_TRAININGATTRS_H
