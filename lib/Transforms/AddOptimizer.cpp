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

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    if (kind != "sgd" && kind != "adam") {
      func.emitError("gopt-add-optimizer: unknown kind '")
          << kind << "' (expects sgd or adam)";
      return signalPassFailure();
    }
    double rate = lr >= 0 ? lr.getValue() : (kind == "adam" ? 1e-3 : 1e-2);
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
    SmallVector<Value> values;
    SmallVector<DictionaryAttr> resultAttrs;
    // Adam's step counter: one f32 scalar shared by all parameters.
    Value step;
    int updated = 0;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      Value result = ret.getOperand(i);
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
      Location loc = NameLoc::get(b.getStringAttr(name + "/" + kind.getValue()),
                                  ret.getLoc());
      auto addState = [&](StringRef suffix) {
        return addStateArgument(
            func, type, getUniqueBindingName(func, (name + "/" + suffix).str()),
            attrs::kStateOptimizer, Attribute());
      };
      auto returnUpdate = [&](Value value, BlockArgument of) {
        StringRef ofName = getArgName(func, of.getArgNumber());
        values.push_back(value);
        resultAttrs.push_back(makeResultAttrs(
            context, getUniqueBindingName(func, (ofName + "/new").str()),
            {{attrs::kUpdates, ofName}}));
      };
      if (kind == "sgd") {
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
    setFunctionResults(func, values, resultAttrs);
  }
};

} // namespace
