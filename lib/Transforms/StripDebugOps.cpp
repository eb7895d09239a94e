//===- StripDebugOps.cpp - Remove ops that compute nothing ----------------===//
//
// identity, check_numerics, stop_gradient (inference) and inference dropout
// pass their operand through; they are replaced by it. Pure ops left without
// users are then erased.
//
//===----------------------------------------------------------------------===//

#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace gopt {
#define GEN_PASS_DEF_STRIPDEBUGOPS
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct StripDebugOpsPass
    : public gopt::impl::StripDebugOpsBase<StripDebugOpsPass> {
  using StripDebugOpsBase::StripDebugOpsBase;

  /// The operand an op passes through unchanged, or null.
  Value getPassedThrough(Operation *op) const {
    if (auto identity = dyn_cast<IdentityOp>(op))
      return identity.getX();
    if (auto check = dyn_cast<CheckNumericsOp>(op))
      return check.getX();
    if (auto stop = dyn_cast<StopGradientOp>(op))
      return training ? Value() : stop.getX();
    if (auto dropout = dyn_cast<DropoutOp>(op))
      return dropout.getTraining() && !dropout.getRatio().isZero() && !inference
                 ? Value()
                 : dropout.getX();
    return Value();
  }

  void runOnOperation() override {
    SmallVector<Operation *> debugOps;
    getOperation().walk([&](Operation *op) {
      if (getPassedThrough(op))
        debugOps.push_back(op);
    });
    int64_t identities = 0, checks = 0, stops = 0, dropouts = 0;
    for (Operation *op : debugOps) {
      identities += isa<IdentityOp>(op);
      checks += isa<CheckNumericsOp>(op);
      stops += isa<StopGradientOp>(op);
      dropouts += isa<DropoutOp>(op);
      op->getResult(0).replaceAllUsesWith(getPassedThrough(op));
      op->erase();
      ++numRemoved;
    }

    // Erase dead pure ops, users first, so chains of them go in one sweep.
    int64_t dead = 0;
    SmallVector<Operation *> all;
    getOperation().walk([&](Operation *op) { all.push_back(op); });
    for (Operation *op : llvm::reverse(all)) {
      // Ops with regions are skipped: erasing one would free the nested ops
      // that come later in this list.
      if (op->getNumRegions() != 0 || !isOpTriviallyDead(op))
        continue;
      op->erase();
      ++numDead;
      ++dead;
    }
    reportChanges(getOperation(), report, getArgument(),
                  "removed " + plural(debugOps.size(), "debug op") + " (" +
                      std::to_string(identities) + " identity, " +
                      std::to_string(checks) + " check_numerics, " +
                      std::to_string(stops) + " stop_gradient, " +
                      std::to_string(dropouts) + " dropout), erased " +
                      plural(dead, "dead op"));
  }
};

} // namespace
