//===- AddLoss.cpp - A loss on a graph output -----------------------------===//
//
// Turns an inference graph into a function of (inputs, labels) returning a
// scalar loss, the form --gopt-autodiff differentiates. gopt-run --train
// runs it when it is given an inference graph.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace gopt {
#define GEN_PASS_DEF_ADDLOSS
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct AddLossPass : public gopt::impl::AddLossBase<AddLossPass> {
  using AddLossBase::AddLossBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    if (func.getNumResults() == 0) {
      func.emitError("gopt-add-loss: the graph has no output to put a loss on");
      return signalPassFailure();
    }
    unsigned index = 0;
    if (!output.empty()) {
      std::string known;
      for (index = 0; index < func.getNumResults(); ++index) {
        if (getResultName(func, index) == output)
          break;
        known += (known.empty() ? "" : ", ") + getResultName(func, index).str();
      }
      if (index == func.getNumResults()) {
        func.emitError("gopt-add-loss: no output named '")
            << output << "' (outputs: " << known << ")";
        return signalPassFailure();
      }
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value prediction = ret.getOperand(index);
    auto type = cast<RankedTensorType>(prediction.getType());
    if (!type.getElementType().isF32()) {
      func.emitError("gopt-add-loss: output ")
          << index << " has element type " << type.getElementType()
          << ", a loss needs f32";
      return signalPassFailure();
    }

    OpBuilder b(ret);
    RankedTensorType labelsType;
    if (kind == LossKind::SoftmaxCrossEntropy) {
      if (type.getRank() != 2) {
        func.emitError("gopt-add-loss: softmax-cross-entropy needs [batch, "
                       "classes] logits, output ")
            << index << " has type " << type;
        return signalPassFailure();
      }
      labelsType = RankedTensorType::get(
          {type.getDimSize(0)},
          b.getIntegerType(labelType == LabelType::I64 ? 64 : 32));
    } else {
      labelsType = type;
    }
    unsigned labelsIndex = func.getNumArguments();
    func.insertArgument(labelsIndex, labelsType,
                        b.getDictionaryAttr(b.getNamedAttr(
                            attrs::kName, b.getStringAttr(getUniqueBindingName(
                                              func, "labels")))),
                        func.getLoc());
    Value labels = func.getArgument(labelsIndex);
    Location loc = NameLoc::get(b.getStringAttr("loss"), ret.getLoc());
    Value loss = kind == LossKind::Mse
                     ? b.create<MseLossOp>(loc, prediction, labels).getResult()
                     : b.create<SoftmaxCrossEntropyOp>(loc, prediction, labels)
                           .getResult();

    SmallVector<Value> values = {loss};
    SmallVector<DictionaryAttr> resultAttrs = {
        makeResultAttrs(&getContext(), getUniqueBindingName(func, "loss"))};
    // State updates (batch-norm running statistics from
    // --gopt-train-batch-norm) are results of the step, not outputs: they
    // stay whatever keep-outputs says.
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (keepOutputs || func.getResultAttr(i, attrs::kUpdates)) {
        values.push_back(ret.getOperand(i));
        resultAttrs.push_back(func.getResultAttrDict(i)
                                  ? func.getResultAttrDict(i)
                                  : b.getDictionaryAttr({}));
      }
    }
    setFunctionResults(func, values, resultAttrs);
  }
};

} // namespace
