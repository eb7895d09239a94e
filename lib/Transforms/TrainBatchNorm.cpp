//===- TrainBatchNorm.cpp - Inference batch norms in training form --------===//
//
// An exported inference graph normalizes with running statistics; training
// normalizes with the batch's and keeps the running ones up to date. Each
// inference batch_norm whose statistics are state becomes the training
// form, and the updated statistics are returned as state updates.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace gopt {
#define GEN_PASS_DEF_TRAINBATCHNORM
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// The state argument `value` is, or null.
BlockArgument getStateArgument(func::FuncOp func, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(arg.getArgNumber(), attrs::kState))
    return BlockArgument();
  return arg;
}

struct TrainBatchNormPass
    : public gopt::impl::TrainBatchNormBase<TrainBatchNormPass> {
  using TrainBatchNormBase::TrainBatchNormBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    if (!(momentum >= 0 && momentum <= 1)) {
      func.emitError("gopt-train-batch-norm: expects momentum in [0, 1], got ")
          << momentum;
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    // New results: each updated statistic and the state it updates.
    SmallVector<std::pair<Value, BlockArgument>> updates;
    SmallVector<BatchNormOp> norms;
    func.walk([&](BatchNormOp bn) {
      if (!bn.getTraining())
        norms.push_back(bn);
    });
    for (BatchNormOp bn : norms) {
      BlockArgument mean = getStateArgument(func, bn.getMean());
      BlockArgument variance = getStateArgument(func, bn.getVariance());
      if (!mean || !variance) {
        bn.emitOpError("gopt-train-batch-norm: the mean and variance must be "
                       "state arguments to be updated (run "
                       "gopt-lift-params{batch-norm-stats=true} first)");
        return signalPassFailure();
      }
      OpBuilder b(bn);
      auto training = b.create<BatchNormOp>(
          bn.getLoc(), bn.getX(), bn.getScale(), bn.getOffset(), mean, variance,
          bn.getEpsilonAttr(), bn.getDataFormatAttr(), b.getBoolAttr(true),
          b.getF32FloatAttr(momentum), b.getBoolAttr(false));
      bn.getY().replaceAllUsesWith(training.getY());
      bn.erase();
      updates.push_back({training.getStatistics()[2], mean});
      updates.push_back({training.getStatistics()[3], variance});
    }
    if (norms.empty())
      return;
    // The return op now uses the new batch norms' results.
    SmallVector<Value> values(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      resultAttrs.push_back(func.getResultAttrDict(i)
                                ? func.getResultAttrDict(i)
                                : DictionaryAttr::get(&getContext()));
    for (auto [stat, arg] : updates) {
      StringRef name = getArgName(func, arg.getArgNumber());
      values.push_back(stat);
      resultAttrs.push_back(makeResultAttrs(
          &getContext(), getUniqueBindingName(func, (name + "/new").str()),
          {{attrs::kUpdates, name}}));
    }
    setFunctionResults(func, values, resultAttrs);
  }
};

} // namespace
