//===- PlanNames.h - The names a graph has in its runtime plan --*- C++ -*-===//
//
// The one naming rule for what lowering a graph function to a runtime plan
// (lowerToPlan, gopt/Conversion/GoptToPlan.h) produces, kept with the IR
// next to NameLoc.h so that passes (static quantization matches calibration
// files by these names; placement asks about op kinds) need not link the
// lowering:
//
// - an op's plan kind is its name without the dialect ("conv2d");
// - an op is named by its NameLoc (findNameLoc), else `<kind>_<index>`, the
//   index counting the function's ops (constants included) in order;
// - result n of a multi-result op is `<op name>:<n>`, a single result is the
//   op name;
// - a region of a control-flow op is a plan of its own, named alike; its
//   arguments are `arg<i>` and its yielded values `output<i>`;
// - an argument is bound under its gopt.name, else `input<i>` (`state<i>`
//   for state arguments); a returned value under its result's gopt.name,
//   else `output<i>`. A value returned once that a non-constant op produces
//   (and that updates no state) is that output's tensor, so it takes the
//   output's name.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_DIALECT_GOPT_IR_PLANNAMES_H
#define GOPT_DIALECT_GOPT_IR_PLANNAMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace gopt {

/// The kind `op` has in a plan: its name without the dialect prefix.
std::string getPlanOpKind(mlir::Operation *op);

/// The name an argument or result binding has in a plan: the `gopt.name` in
/// `attrs`, else `<prefix><index>`.
std::string getPlanBindingName(mlir::DictionaryAttr attrs,
                               llvm::StringRef prefix, unsigned index);

/// The plan names of a graph function (one block; see the rule above).
struct PlanNames {
  /// Per op of the body (constants included, the terminator not).
  llvm::DenseMap<mlir::Operation *, std::string> ops;
  /// Per argument and op result: the name of its plan tensor.
  llvm::DenseMap<mlir::Value, std::string> tensors;
  /// The results that are output tensors themselves (returned once, made by
  /// a non-constant op, no state update), with their output names; other
  /// returned values are copied into an output tensor of their own.
  llvm::DenseMap<mlir::Value, std::string> outputs;
};
PlanNames getPlanNames(mlir::func::FuncOp func);
/// The plan names of a control-flow op's region (the plan of its own the
/// runtime runs): arguments are `arg<i>`, yielded values `output<i>`, ops
/// as in a function.
PlanNames getRegionPlanNames(mlir::Region &region);

/// getPlanNames(func).tensors: the name each argument and op result has in
/// the plan (the names gopt-run's profile and calibration files use).
llvm::DenseMap<mlir::Value, std::string>
getPlanTensorNames(mlir::func::FuncOp func);

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_PLANNAMES_H
