//===- PlanOp.h - One gopt op as the runtime sees it ------------*- C++ -*-===//
//
// The one IR-to-plan op converter: the plan lowering (GoptToPlan.cpp) builds
// every plan op from it, and device placement (lib/Transforms/
// PlaceDevices.cpp) asks the backends' coverage tables
// (gopt/runtime/KernelAvailability.h) about exactly the op the lowering would
// emit. Depends on the dialect and gopt_plan only (library GoptPlanOp), so
// that passes can use it without linking the lowering.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_CONVERSION_PLANOP_H
#define GOPT_CONVERSION_PLANOP_H

#include "mlir/IR/Operation.h"

#include "gopt/runtime/plan.pb.h"

namespace gopt {

/// `op` as a plan op without its name and tensors: its kind
/// (getPlanOpKind), its attributes in the plan's generic form with the ODS
/// defaults made explicit (so that the plan does not depend on the runtime
/// knowing them; attribute kinds the runtime has no use for are dropped),
/// and its device ("gpu" becomes the runtime's "cuda").
plan::Op toPlanOp(mlir::Operation *op);

} // namespace gopt

#endif // GOPT_CONVERSION_PLANOP_H
