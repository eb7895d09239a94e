//===- LiftParams.cpp - Trainable constants become parameter arguments ----===//
//
// A training step needs its weights as values it can update, not constants
// baked into the graph. Each f32 constant in a trainable slot becomes a
// function argument marked as a parameter, with its value kept as the
// argument's initial value (the plan's state initializer).
//
//===----------------------------------------------------------------------===//

#include "OpCategories.h"
#include "Report.h"
#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

namespace gopt {
#define GEN_PASS_DEF_LIFTPARAMS
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// True when `use` is an operand a training step updates, as the op's ODS
/// says (trainableOperands).
bool isTrainableUse(OpOperand &use) {
  Operation *user = use.getOwner();
  StringRef name = user->getName().getStringRef();
  const TrainableOperands *entry = nullptr;
  for (const TrainableOperands &candidate : kTrainableOperands)
    if (name == candidate.opName)
      entry = &candidate;
  unsigned index = use.getOperandNumber();
  if (!entry || !llvm::is_contained(entry->indices(), index))
    return false;
  if (!user->hasTrait<LayoutAgnostic>() || user->getNumOperands() != 2)
    return true;
  // Elementwise: a weight sits beside a computed value; of two listed
  // operands (add, sub) only a tensor is a bias, a scalar is an offset.
  Value other = user->getOperand(1 - index);
  if (other.getDefiningOp<ConstantOp>())
    return false;
  auto type = cast<RankedTensorType>(use.get().getType());
  return entry->numOperands == 1 || type.getNumElements() > 1;
}

/// True when `value` reaches a trainable operand directly or through ops
/// that only rearrange it (an exporter's unsqueeze of a norm's per-channel
/// scale, einsum's transpose of its weight): the constant behind it is the
/// weight, and those ops are differentiated on the way back to it.
bool reachesTrainableUse(Value value) {
  for (OpOperand &use : value.getUses()) {
    if (isTrainableUse(use))
      return true;
    Operation *user = use.getOwner();
    if (isa<ReshapeOp, TransposeOp, FlattenOp>(user) &&
        reachesTrainableUse(user->getResult(0)))
      return true;
  }
  return false;
}

/// A batch_norm's mean or variance operand.
bool isBatchNormStatistic(OpOperand &use) {
  return isa<BatchNormOp>(use.getOwner()) &&
         (use.getOperandNumber() == 3 || use.getOperandNumber() == 4);
}

struct LiftParamsPass : public gopt::impl::LiftParamsBase<LiftParamsPass> {
  using LiftParamsBase::LiftParamsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    SmallVector<ConstantOp> lifted, statistics;
    func.walk([&](ConstantOp constant) {
      auto type = cast<RankedTensorType>(constant.getType());
      if (!type.getElementType().isF32() || type.getRank() == 0)
        return;
      // An ONNX Constant node's value is fixed by the model (PyTorch writes
      // its parameters as initializers): GroupNorm's exported unit scale
      // and zero bias of the instance_norm inside it are not weights.
      if (constant->hasAttr(attrs::kFixed))
        return;
      if (reachesTrainableUse(constant.getResult()))
        lifted.push_back(constant);
      else if (batchNormStats &&
               llvm::any_of(constant->getUses(), isBatchNormStatistic))
        statistics.push_back(constant);
    });
    int64_t elements = 0;
    for (auto [i, constant] : llvm::enumerate(lifted)) {
      std::string base = getImportedName(constant);
      if (base.empty())
        base = "param" + std::to_string(i);
      BlockArgument arg =
          addStateArgument(func, cast<RankedTensorType>(constant.getType()),
                           getUniqueBindingName(func, base), attrs::kStateParam,
                           constant.getValue());
      constant.getResult().replaceAllUsesWith(arg);
      constant.erase();
      elements += cast<RankedTensorType>(arg.getType()).getNumElements();
    }
    for (auto [i, constant] : llvm::enumerate(statistics)) {
      std::string base = getImportedName(constant);
      if (base.empty())
        base = "statistic" + std::to_string(i);
      BlockArgument arg =
          addStateArgument(func, cast<RankedTensorType>(constant.getType()),
                           getUniqueBindingName(func, base),
                           attrs::kStateBuffer, constant.getValue());
      constant.getResult().replaceAllUsesWith(arg);
      constant.erase();
    }
    reportChanges(func, report, getArgument(),
                  "lifted " + plural(lifted.size(), "parameter") + " (" +
                      Twine(elements) + " values)" +
                      (batchNormStats ? ", " + plural(statistics.size(),
                                                      "batch-norm statistic")
                                      : std::string()));
  }
};

} // namespace
