//===- AddOptimizer.cpp - Gradients become parameter updates --------------===//
//
// After --gopt-autodiff the function returns gradients. This pass applies
// an optimizer to them inside the graph, so one plan run is one whole
// training step and the runtime only has to keep the state resident.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace gopt {
#define GEN_PASS_DEF_ADDOPTIMIZER
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct AddOptimizerPass
    : public gopt::impl::AddOptimizerBase<AddOptimizerPass> {
  using AddOptimizerBase::AddOptimizerBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  StringRef kindName() const {
    return kind == OptimizerKind::Adam ? "adam" : "sgd";
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    double rate =
        lr >= 0 ? lr.getValue() : (kind == OptimizerKind::Adam ? 1e-3 : 1e-2);
    if (!(rate > 0) || momentum < 0 || weightDecay < 0 || beta1 < 0 ||
        beta1 >= 1 || beta2 < 0 || beta2 >= 1 || !(epsilon > 0)) {
      func.emitError("gopt-add-optimizer: expects lr > 0, momentum >= 0, "
                     "weight-decay >= 0, beta1 and beta2 in [0, 1) and "
                     "epsilon > 0");
      return signalPassFailure();
    }

    llvm::StringMap<BlockArgument> params;
    for (BlockArgument arg : func.getArguments()) {
      auto state =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attrs::kState);
      if (state && state.getValue() == attrs::kStateParam)
        params[getArgName(func, arg.getArgNumber())] = arg;
    }

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    MLIRContext *context = &getContext();
    FailureOr<LossScaling> scaling = getLossScaling(func, b);
    if (failed(scaling))
      return signalPassFailure();
    SmallVector<Value> results(ret.getOperands());
    if (scaling->scale)
      unscaleGradients(func, b, *scaling, results);

    SmallVector<Value> values;
    SmallVector<DictionaryAttr> resultAttrs;
    // Adam's step counter: one f32 scalar shared by all parameters.
    Value step;
    int updated = 0;
    auto appendUpdate = [&](Value value, BlockArgument of) {
      StringRef ofName = getArgName(func, of.getArgNumber());
      values.push_back(value);
      resultAttrs.push_back(makeResultAttrs(
          context, getUniqueBindingName(func, (ofName + "/new").str()),
          {{attrs::kUpdates, ofName}}));
    };
    auto returnUpdate = [&](Value value, BlockArgument of) {
      // A skipped step (inf/NaN gradients) keeps the old value.
      if (scaling->finite)
        value = b.create<SelectOp>(value.getLoc(), scaling->finite, value, of);
      appendUpdate(value, of);
    };
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      Value result = results[i];
      auto gradientOf =
          func.getResultAttrOfType<StringAttr>(i, attrs::kGradientOf);
      if (!gradientOf) {
        values.push_back(result);
        resultAttrs.push_back(func.getResultAttrDict(i)
                                  ? func.getResultAttrDict(i)
                                  : b.getDictionaryAttr({}));
        continue;
      }
      StringRef name = gradientOf.getValue();
      auto it = params.find(name);
      if (it == params.end()) {
        func.emitError("gopt-add-optimizer: result ")
            << i << " is the gradient of '" << name
            << "', which is not a parameter argument";
        return signalPassFailure();
      }
      BlockArgument param = it->second;
      auto type = cast<RankedTensorType>(param.getType());
      Location loc =
          NameLoc::get(b.getStringAttr(name + "/" + kindName()), ret.getLoc());
      auto addState = [&](StringRef suffix) {
        return addStateArgument(
            func, type, getUniqueBindingName(func, (name + "/" + suffix).str()),
            attrs::kStateOptimizer, Attribute());
      };
      if (kind == OptimizerKind::Sgd) {
        BlockArgument velocity = addState("velocity");
        auto update = b.create<SgdUpdateOp>(
            loc, param, result, velocity, b.getF32FloatAttr(rate),
            b.getF32FloatAttr(momentum), b.getF32FloatAttr(weightDecay),
            b.getBoolAttr(nesterov));
        returnUpdate(update.getNewParam(), param);
        returnUpdate(update.getNewVelocity(), velocity);
      } else {
        if (!step) {
          auto scalar = RankedTensorType::get({}, b.getF32Type());
          BlockArgument stepArg = addStateArgument(
              func, scalar, getUniqueBindingName(func, "optimizer/step"),
              attrs::kStateOptimizer, Attribute());
          Value one = b.create<ConstantOp>(
              ret.getLoc(), DenseElementsAttr::get(scalar, 1.0f));
          step = b.create<AddOp>(ret.getLoc(), stepArg, one);
          returnUpdate(step, stepArg);
        }
        BlockArgument m = addState("m");
        BlockArgument v = addState("v");
        auto update = b.create<AdamUpdateOp>(
            loc, param, result, m, v, step, b.getF32FloatAttr(rate),
            b.getF32FloatAttr(beta1), b.getF32FloatAttr(beta2),
            b.getF32FloatAttr(epsilon), b.getF32FloatAttr(weightDecay));
        returnUpdate(update.getNewParam(), param);
        returnUpdate(update.getNewM(), m);
        returnUpdate(update.getNewV(), v);
      }
      ++updated;
    }
    if (updated == 0) {
      func.emitError("gopt-add-optimizer: the function returns no gradients "
                     "(run --gopt-autodiff first)");
      return signalPassFailure();
    }
    if (scaling->finite) {
      // The scale's own update is never skipped: it backs off on overflow.
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      BlockArgument goodSteps = addStateArgument(
          func, scalar,
          getUniqueBindingName(
              func,
              (getArgName(func, scaling->scale.getArgNumber()) + "/good_steps")
                  .str()),
          attrs::kStateOptimizer, Attribute());
      DictionaryAttr config = scaling->config;
      auto update = b.create<LossScaleUpdateOp>(
          NameLoc::get(b.getStringAttr("optimizer/loss_scale/update"),
                       ret.getLoc()),
          scaling->scale, goodSteps, scaling->finite,
          cast<IntegerAttr>(config.get("growth_interval")),
          cast<FloatAttr>(config.get("growth_factor")),
          cast<FloatAttr>(config.get("backoff_factor")));
      appendUpdate(update.getNewScale(), scaling->scale);
      appendUpdate(update.getNewGoodSteps(), goodSteps);
    }
    setFunctionResults(func, values, resultAttrs);
  }

  struct LossScaling {
    BlockArgument scale;   // null: the gradients are not scaled
    DictionaryAttr config; // null: a fixed scale
    Value finite;          // all gradients finite (dynamic scaling only)
  };

  /// Reads the gopt.loss_scale marks --gopt-autodiff left on the gradients:
  /// all or none of them, naming one f32 scalar state argument.
  FailureOr<LossScaling> getLossScaling(func::FuncOp func, OpBuilder &b) {
    LossScaling scaling;
    std::optional<StringRef> name;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (!func.getResultAttr(i, attrs::kGradientOf))
        continue;
      auto mark = func.getResultAttrOfType<StringAttr>(i, attrs::kLossScale);
      StringRef markName = mark ? mark.getValue() : StringRef();
      if (name && *name != markName) {
        func.emitError("gopt-add-optimizer: gradient result ")
            << i << " is scaled by '" << markName << "' but an earlier one by '"
            << *name << "'";
        return failure();
      }
      name = markName;
    }
    if (!name || name->empty())
      return scaling;
    for (BlockArgument arg : func.getArguments())
      if (getArgName(func, arg.getArgNumber()) == *name)
        scaling.scale = arg;
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    if (!scaling.scale || scaling.scale.getType() != scalar) {
      func.emitError("gopt-add-optimizer: the gradients are scaled by '")
          << *name << "', which is not an f32 scalar argument";
      return failure();
    }
    scaling.config = func.getArgAttrOfType<DictionaryAttr>(
        scaling.scale.getArgNumber(), attrs::kLossScaleUpdate);
    if (scaling.config &&
        (!isa_and_nonnull<IntegerAttr>(scaling.config.get("growth_interval")) ||
         !isa_and_nonnull<FloatAttr>(scaling.config.get("growth_factor")) ||
         !isa_and_nonnull<FloatAttr>(scaling.config.get("backoff_factor")))) {
      func.emitError("gopt-add-optimizer: '")
          << attrs::kLossScaleUpdate << "' of '" << *name
          << "' needs growth_interval, growth_factor and backoff_factor";
      return failure();
    }
    return scaling;
  }

  /// Multiplies every gradient by 1 / scale (in f32) and, for dynamic
  /// scaling, checks them all for inf/NaN in one op.
  void unscaleGradients(func::FuncOp func, OpBuilder &b, LossScaling &scaling,
                        SmallVectorImpl<Value> &results) {
    Location loc = NameLoc::get(b.getStringAttr("optimizer/loss_scale/unscale"),
                                func.getLoc());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value one = b.create<ConstantOp>(loc, DenseElementsAttr::get(scalar, 1.0f));
    Value inverse = b.create<DivOp>(loc, one, scaling.scale);
    SmallVector<Value> gradients;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (!func.getResultAttr(i, attrs::kGradientOf))
        continue;
      results[i] = b.create<MulOp>(loc, results[i], inverse);
      gradients.push_back(results[i]);
    }
    if (scaling.config)
      scaling.finite = b.create<AllFiniteOp>(
          NameLoc::get(b.getStringAttr("optimizer/loss_scale/all_finite"),
                       func.getLoc()),
          gradients);
  }
};

} // namespace
