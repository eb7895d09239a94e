//===- Autodiff.cpp - Reverse-mode differentiation of a loss --------------===//
//
// Walks the graph backwards from the loss, asking each op between the
// parameters and the loss for the ops that compute its operands' gradients
// from its results' gradients (vector-Jacobian products: the op's
// DifferentiableOpInterface, rules in lib/Dialect/Gopt/IR/Gradients/), and
// sums where a value has several uses. An op without the interface is an
// error naming it. gopt.if's rule asks for the same walk over its branches
// (differentiateBlock), each in a Differentiator of its own.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace gopt {
#define GEN_PASS_DEF_AUTODIFF
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// What ODS says of an op without a gradient rule (notDifferentiable or
/// missingGradient, through GradientCoverage.inc), for the error.
std::string noGradientReason(StringRef mnemonic) {
  static const llvm::StringMap<std::string> reasons = [] {
    llvm::StringMap<std::string> map;
#define GOPT_NOT_DIFFERENTIABLE(name, why)                                     \
  map[name] = std::string("it is not differentiable: ") + why;
#define GOPT_MISSING_GRADIENT(name, why)                                       \
  map[name] = std::string("gopt does not write its gradient yet: ") + why;
#include "gopt/runtime/GradientCoverage.inc"
#undef GOPT_NOT_DIFFERENTIABLE
#undef GOPT_MISSING_GRADIENT
    return map;
  }();
  auto it = reasons.find(mnemonic);
  return it == reasons.end() ? std::string() : it->second;
}

/// The reverse walk's bookkeeping behind the ops' gradient rules: which
/// values need a gradient, and each value's gradient so far. One per block:
/// a region's block (gopt.if's branches) gets a Differentiator of its own.
class Differentiator : public GradientBuilder {
public:
  Differentiator(Operation *insertBefore, Location sumLoc)
      : GradientBuilder(OpBuilder(insertBefore), sumLoc) {}

  /// Differentiates `loss` with respect to `params`; gradients of params the
  /// loss does not depend on are zeros.
  FailureOr<SmallVector<Value>> run(func::FuncOp func, Value loss,
                                    ArrayRef<BlockArgument> params,
                                    Value lossScale);

  bool needsGrad(Value value) const override { return needed.contains(value); }
  void accumulate(Value value, Value grad) override;
  bool isUnitSeed(Value grad) const override { return seed && grad == seed; }
  FailureOr<SmallVector<Value>>
  differentiateBlock(Block &block, ValueRange outputs,
                     ArrayRef<Value> outputGrads, ArrayRef<Value> wrt) override;

private:
  /// Writes the gradients of `op`'s operands with the op's rule.
  LogicalResult backprop(Operation *op);
  /// The reverse walk over `body` from `outputs` (seeded with
  /// `outputGrads`, null: none) to `wrt`; `nameOps` names the backward ops
  /// after their forward op.
  LogicalResult walk(Block &body, ValueRange outputs,
                     ArrayRef<Value> outputGrads, ArrayRef<Value> wrt,
                     bool nameOps);

  llvm::DenseSet<Value> needed;
  DenseMap<Value, Value> grads;
  /// The seed d(loss)/d(loss) = 1 (null for a scaled loss): ops consuming it
  /// skip the multiply.
  Value seed;
};

void Differentiator::accumulate(Value value, Value grad) {
  auto it = grads.find(value);
  if (it == grads.end()) {
    grads[value] = grad;
    return;
  }
  it->second = builder.create<AddOp>(sumLoc, it->second, grad);
}

LogicalResult Differentiator::backprop(Operation *op) {
  SmallVector<Value> resultGrads;
  for (Value result : op->getResults())
    resultGrads.push_back(grads.lookup(result));
  // Ops whose results carry no gradient contribute nothing.
  if (llvm::all_of(resultGrads, [](Value grad) { return !grad; }))
    return success();
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable) {
    InFlightDiagnostic diag =
        emitNoGradientError(op)
        << "the loss depends on it through a parameter, and it has "
           "no gradient rule (DifferentiableOpInterface; "
           "docs/op-semantics.md lists the differentiable ops)";
    std::string reason =
        op->getDialect() && op->getDialect()->getNamespace() ==
                                GoptDialect::getDialectNamespace()
            ? noGradientReason(op->getName().stripDialect())
            : std::string();
    if (!reason.empty())
      diag << "; " << reason;
    return failure();
  }
  return differentiable.buildGradients(*this, resultGrads);
}

FailureOr<SmallVector<Value>>
Differentiator::differentiateBlock(Block &block, ValueRange outputs,
                                   ArrayRef<Value> outputGrads,
                                   ArrayRef<Value> wrt) {
  Differentiator inner(block.getTerminator(), sumLoc);
  if (failed(inner.walk(block, outputs, outputGrads, wrt, /*nameOps=*/false)))
    return failure();
  SmallVector<Value> result;
  for (Value value : wrt) {
    Value grad = inner.grads.lookup(value);
    result.push_back(grad ? grad : inner.zerosLike(value));
  }
  return result;
}

LogicalResult Differentiator::walk(Block &body, ValueRange outputs,
                                   ArrayRef<Value> outputGrads,
                                   ArrayRef<Value> wrt, bool nameOps) {
  // Values that depend on `wrt` through float values (integer and
  // boolean values carry no gradient: indices, masks, shapes; a float cast
  // of shape(x) or the values gathered at argmax(x)'s indices do not depend
  // on x for autodiff)...
  auto carriesGradient = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && isa<FloatType>(type.getElementType());
  };
  llvm::DenseSet<Value> fromParams(wrt.begin(), wrt.end());
  llvm::DenseSet<Value> wrtSet(wrt.begin(), wrt.end());
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) {
          return fromParams.contains(v) && carriesGradient(v);
        }))
      for (Value r : op.getResults())
        fromParams.insert(r);
  // ... and that the outputs with a gradient depend on.
  llvm::SetVector<Value> worklist;
  for (auto [output, grad] : llvm::zip(outputs, outputGrads))
    if (grad)
      worklist.insert(output);
  for (size_t i = 0; i < worklist.size(); ++i) {
    Value v = worklist[i];
    if (!fromParams.contains(v) || !carriesGradient(v))
      continue;
    needed.insert(v);
    // The walk ends at `wrt` (a loop's reverse body differentiates with
    // respect to values it gathers).
    if (Operation *def = v.getDefiningOp(); def && !wrtSet.contains(v))
      for (Value operand : def->getOperands())
        worklist.insert(operand);
  }
  for (auto [output, grad] : llvm::zip(outputs, outputGrads))
    if (grad && needed.contains(output))
      accumulate(output, grad);

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getResults(), [&](Value r) {
          return needed.contains(r) && !wrtSet.contains(r);
        }))
      ops.push_back(&op);
  Operation *terminator = body.getTerminator();
  int unnamed = 0;
  for (Operation *op : llvm::reverse(ops)) {
    Operation *last = terminator->getPrevNode();
    if (failed(backprop(op)))
      return failure();
    if (!nameOps)
      continue;
    // Name the gradient ops after their forward op ("conv1/grad"), so
    // profiles tell the forward and the backward pass apart.
    Location forwardLoc = op->getLoc();
    std::string name = getImportedName(op);
    if (name.empty()) {
      // Unnamed ops get a name too, so both passes show up apart.
      name =
          op->getName().stripDialect().str() + "_" + std::to_string(unnamed++);
      op->setLoc(NameLoc::get(builder.getStringAttr(name), forwardLoc));
    }
    Location gradLoc =
        NameLoc::get(builder.getStringAttr(name + "/grad"), forwardLoc);
    for (Operation *created = last->getNextNode(); created != terminator;
         created = created->getNextNode())
      if (created->getLoc() == forwardLoc)
        created->setLoc(gradLoc);
  }
  return success();
}

FailureOr<SmallVector<Value>>
Differentiator::run(func::FuncOp func, Value loss,
                    ArrayRef<BlockArgument> params, Value lossScale) {
  Block &body = func.getBody().front();
  // Every training dropout draws its own mask: give those without a seed
  // distinct ones (the gradient op recomputes the mask from it).
  int64_t nextSeed = 1;
  llvm::DenseSet<int64_t> usedSeeds;
  body.walk([&](DropoutOp o) { usedSeeds.insert(o.getSeed()); });
  body.walk([&](DropoutOp o) {
    if (!o.getTraining() || o.getSeed() != 0)
      return;
    while (usedSeeds.contains(nextSeed))
      ++nextSeed;
    o.setSeed(nextSeed);
    usedSeeds.insert(nextSeed);
  });

  // d(loss)/d(loss) = 1, or the loss scale: then every gradient is scaled
  // (and the ops consuming it multiply by it).
  Value lossGrad = lossScale;
  if (!lossGrad) {
    seed = scalarConstant(1.0f, tensorType(loss).getElementType());
    lossGrad = seed;
  }
  SmallVector<Value> wrt(params.begin(), params.end());
  if (failed(walk(body, loss, lossGrad, wrt, /*nameOps=*/true)))
    return failure();

  SmallVector<Value> result;
  for (BlockArgument param : params) {
    Value grad = grads.lookup(param);
    if (!grad) {
      auto type = tensorType(param);
      grad = builder.create<ConstantOp>(
          func.getLoc(),
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(), 0.0)));
    } else if (grad.getType() != param.getType()) {
      // Gradients are computed at the shapes ops infer; a parameter's
      // type is static, so cast the (compatible) shape back.
      FailureOr<SmallVector<int64_t>> target =
          getReshapeTarget(tensorType(param).getShape());
      grad = builder.create<ReshapeOp>(func.getLoc(), param.getType(), grad,
                                       builder.getDenseI64ArrayAttr(*target));
    }
    result.push_back(grad);
  }
  return result;
}

struct AutodiffPass : public gopt::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    FailureOr<unsigned> found = findLossResult(func, loss, "gopt-autodiff");
    if (failed(found))
      return signalPassFailure();
    unsigned lossIndex = *found;
    Value lossValue = ret.getOperand(lossIndex);
    auto lossType = tensorType(lossValue);
    if (lossType.getRank() != 0 || !lossType.getElementType().isF32()) {
      func.emitError("gopt-autodiff: loss '")
          << loss << "' must be an f32 scalar, got " << lossType;
      return signalPassFailure();
    }
    // A loss-scaled step (--gopt-loss-scaling): seed with the scale.
    Value lossScale;
    auto scaleName =
        func.getResultAttrOfType<StringAttr>(lossIndex, attrs::kLossScale);
    if (scaleName) {
      for (BlockArgument arg : func.getArguments())
        if (getArgName(func, arg.getArgNumber()) == scaleName.getValue())
          lossScale = arg;
      if (!lossScale || tensorType(lossScale) != lossType) {
        func.emitError("gopt-autodiff: the loss is scaled by '")
            << scaleName.getValue() << "', which is not an f32 scalar argument";
        return signalPassFailure();
      }
    }
    SmallVector<BlockArgument> params;
    for (BlockArgument arg : func.getArguments()) {
      auto state =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attrs::kState);
      if (state && state.getValue() == attrs::kStateParam)
        params.push_back(arg);
    }
    if (params.empty()) {
      func.emitError("gopt-autodiff: the function has no parameters "
                     "(arguments with gopt.state = \"param\"); run "
                     "--gopt-lift-params first");
      return signalPassFailure();
    }

    Differentiator differentiator(ret, func.getLoc());
    FailureOr<SmallVector<Value>> gradients =
        differentiator.run(func, lossValue, params, lossScale);
    if (failed(gradients))
      return signalPassFailure();

    SmallVector<Value> values(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      resultAttrs.push_back(func.getResultAttrDict(i)
                                ? func.getResultAttrDict(i)
                                : DictionaryAttr::get(&getContext()));
    for (auto [param, grad] : llvm::zip(params, *gradients)) {
      StringRef name = getArgName(func, param.getArgNumber());
      values.push_back(grad);
      SmallVector<std::pair<StringRef, StringRef>> marks = {
          {attrs::kGradientOf, name}};
      if (scaleName)
        marks.push_back({attrs::kLossScale, scaleName.getValue()});
      resultAttrs.push_back(makeResultAttrs(
          &getContext(), getUniqueBindingName(func, "grad/" + name.str()),
          marks));
    }
    setFunctionResults(func, values, resultAttrs);
  }
};

} // namespace
