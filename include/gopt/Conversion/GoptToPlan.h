//===- GoptToPlan.h - Lower a gopt graph to a runtime plan ------*- C++ -*-===//
//
// The last step of the compiler: a gopt graph (a func.func of gopt ops)
// becomes a plan the runtime executes without MLIR: a topological schedule of
// kernel calls, tensors with their shapes and kinds, constants in one aligned
// blob, and named input and output bindings. Arena offsets are assigned when
// a session is instantiated for a batch size (runtime/MemoryPlanner), because
// dynamic batch dimensions are only known then.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_CONVERSION_GOPTTOPLAN_H
#define GOPT_CONVERSION_GOPTTOPLAN_H

#include "gopt/Dialect/Gopt/IR/PlanNames.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "gopt/runtime/plan.pb.h"

namespace gopt {

/// The function that holds the graph: @main if present, else the only
/// function in the module. Emits an error naming the candidates otherwise.
mlir::FailureOr<mlir::func::FuncOp> findGraphFunction(mlir::ModuleOp module);

/// Lowers `func` to a plan, its ops and tensors named by getPlanNames()
/// (gopt/Dialect/Gopt/IR/PlanNames.h), each op converted by toPlanOp()
/// (gopt/Conversion/PlanOp.h); emits a diagnostic at the offending op (an op of
/// another dialect, an unsupported element type, ...) and fails otherwise.
mlir::FailureOr<plan::Plan> lowerToPlan(mlir::func::FuncOp func);

} // namespace gopt

#endif // GOPT_CONVERSION_GOPTTOPLAN_H
