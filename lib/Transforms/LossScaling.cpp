//===- LossScaling.cpp - Mark the loss for dynamic loss scaling -----------===//
//
// f16 gradients underflow: most of a network's gradient values are below
// f16's smallest normal (6e-5). Scaling the loss by S scales every gradient
// by S, and dividing the f32 parameter gradients by S before the update
// undoes it. This pass only adds the scale as state and marks the loss;
// --gopt-autodiff seeds the backward pass with it and --gopt-add-optimizer
// unscales, checks and adapts it, because those passes build the ops the
// scale acts on. The marks in between are ordinary attributes, so each
// stage can be inspected (and lit-tested) on its own.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

namespace gopt {
#define GEN_PASS_DEF_LOSSSCALING
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct LossScalingPass : public gopt::impl::LossScalingBase<LossScalingPass> {
  using LossScalingBase::LossScalingBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    if (!(initScale > 0) || !std::isfinite(initScale.getValue()) ||
        growthInterval < 1 || !(growthFactor > 1) || !(backoffFactor > 0) ||
        !(backoffFactor < 1)) {
      func.emitError("gopt-loss-scaling: expects a finite init-scale > 0, "
                     "growth-interval >= 1, growth-factor > 1 and "
                     "backoff-factor in (0, 1)");
      return signalPassFailure();
    }
    FailureOr<unsigned> found = findLossResult(func, loss, "gopt-loss-scaling");
    if (failed(found))
      return signalPassFailure();
    unsigned lossIndex = *found;
    if (func.getResultAttr(lossIndex, attrs::kLossScale)) {
      func.emitError("gopt-loss-scaling: the loss '")
          << loss << "' is already scaled";
      return signalPassFailure();
    }
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, attrs::kGradientOf)) {
        func.emitError("gopt-loss-scaling: the function already returns "
                       "gradients; run it before --gopt-autodiff");
        return signalPassFailure();
      }

    Builder b(&getContext());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    std::string name = getUniqueBindingName(func, "optimizer/loss_scale");
    BlockArgument scale = addStateArgument(
        func, scalar, name, attrs::kStateOptimizer,
        DenseElementsAttr::get(scalar, static_cast<float>(initScale)));
    if (dynamic)
      func.setArgAttr(
          scale.getArgNumber(), attrs::kLossScaleUpdate,
          b.getDictionaryAttr(
              {b.getNamedAttr("growth_interval",
                              b.getI64IntegerAttr(growthInterval)),
               b.getNamedAttr("growth_factor", b.getF32FloatAttr(growthFactor)),
               b.getNamedAttr("backoff_factor",
                              b.getF32FloatAttr(backoffFactor))}));
    func.setResultAttr(lossIndex, attrs::kLossScale, b.getStringAttr(name));
  }
};

} // namespace
