//===- MixedPrecision.cpp - Low-precision regions with casts at the edges -===//
//
// TensorFlow's auto_mixed_precision, on gopt ops: allow-listed ops (conv2d,
// matmul) always go to f16/bf16; infer- and clear-listed ops follow when all
// their float operands are already low precision (or constants); everything
// else stays f32. One forward walk decides (defs come before uses in a graph
// function), so an op downstream of an f32-only op stays f32: TensorFlow's
// deny propagation falls out of the rule. Then casts are put only where a
// value crosses between the two precisions, one per value and direction.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"
#include "PatternUtils.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace gopt {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

enum class ListKind { Allow, Infer, Clear, Deny };

/// The list an op kind is on (TensorFlow's lists, mapped to gopt's ops).
ListKind getListKind(Operation *op) {
  if (!isa<GoptDialect>(op->getDialect()))
    return ListKind::Deny;
  if (auto bn = dyn_cast<BatchNormOp>(op))
    // Training batch norm reduces over the batch: f32 statistics.
    return bn.getTraining() ? ListKind::Deny : ListKind::Infer;
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getTraining() ? ListKind::Deny : ListKind::Clear;
  // The category each op declares in ODS.
  if (op->hasTrait<MixedPrecisionAllow>())
    return ListKind::Allow;
  if (op->hasTrait<MixedPrecisionInfer>())
    return ListKind::Infer;
  if (op->hasTrait<MixedPrecisionClear>())
    return ListKind::Clear;
  return ListKind::Deny;
}

StringRef getListName(ListKind kind) {
  switch (kind) {
  case ListKind::Allow:
    return "allow";
  case ListKind::Infer:
    return "infer";
  case ListKind::Clear:
    return "clear";
  case ListKind::Deny:
    return "deny";
  }
  llvm_unreachable("unknown list");
}

bool isF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

RankedTensorType withElementType(Type type, Type elementType) {
  return cast<RankedTensorType>(type).clone(elementType);
}

struct MixedPrecisionPass
    : public gopt::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  StringRef typeName() const { return type == Precision::F16 ? "f16" : "bf16"; }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The option's values are bf16 and f16 only; f32 can come from C++.
    if (type == Precision::F32) {
      func.emitError("gopt-mixed-precision: type must be bf16 or f16");
      return signalPassFailure();
    }
    llvm::StringSet<> denied;
    for (const std::string &kind : deny) {
      if (!RegisteredOperationName::lookup("gopt." + kind, &getContext())) {
        func.emitError("gopt-mixed-precision: deny= names '")
            << kind << "', which is not a gopt op kind (e.g. add, relu)";
        return signalPassFailure();
      }
      denied.insert(kind);
    }
    if (func.isExternal())
      return;
    OpBuilder b(&getContext());
    lowType =
        type == Precision::BF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
    // One pass instance runs on every function of a module in turn.
    lowCopies.clear();
    convertedConstants.clear();
    castsInserted = constantsConverted = 0;

    Block &body = func.getBody().front();
    llvm::SetVector<Operation *> lowOps;
    for (Operation &op : body)
      if (isEligible(&op, denied) && choosesLow(&op, lowOps))
        lowOps.insert(&op);

    for (Operation *op : lowOps)
      moveToLowPrecision(op);
    for (Operation *op : lowOps)
      castResultsForF32Users(op, lowOps);
    // Constants whose only users now use their low-precision copy.
    for (Operation *constant : convertedConstants)
      if (constant->use_empty())
        constant->erase();

    numLowered += lowOps.size();
    numCasts += castsInserted;
    if (!isReportEnabled(report) || lowOps.empty())
      return;
    explainF32Neighbours(body, lowOps, denied);
    reportChanges(func, report, "gopt-mixed-precision",
                  Twine(plural(lowOps.size(), "op")) + " in " + typeName() +
                      ", " + plural(castsInserted, "cast") + " inserted, " +
                      plural(constantsConverted, "constant") + " converted");
  }

private:
  /// An op the lists may move: every float operand and result is f32, it
  /// has a float operand or result (a comparison's operands move, its i1
  /// result stays), and its kind is not denied.
  bool isEligible(Operation *op, const llvm::StringSet<> &denied) const {
    if (getListKind(op) == ListKind::Deny ||
        denied.contains(op->getName().stripDialect()))
      return false;
    bool hasFloatValue = false;
    for (ValueRange values :
         {ValueRange(op->getResults()), ValueRange(op->getOperands())})
      for (Value value : values) {
        if (!isFloatTensor(value))
          continue;
        if (!isF32Tensor(value))
          return false;
        hasFloatValue = true;
      }
    return hasFloatValue;
  }

  /// allow: always; infer/clear: when every float operand is low precision
  /// already or a constant, and at least one is low precision.
  static bool choosesLow(Operation *op,
                         const llvm::SetVector<Operation *> &lowOps) {
    if (getListKind(op) == ListKind::Allow)
      return true;
    bool anyLow = false;
    for (Value operand : op->getOperands()) {
      if (!isFloatTensor(operand))
        continue;
      Operation *def = operand.getDefiningOp();
      if (def && lowOps.contains(def)) {
        anyLow = true;
        continue;
      }
      if (!def || !isa<ConstantOp>(def))
        return false;
    }
    return anyLow;
  }

  void moveToLowPrecision(Operation *op) {
    for (OpOperand &operand : op->getOpOperands())
      if (isF32Tensor(operand.get()))
        operand.set(getLowPrecision(operand.get()));
    for (Value result : op->getResults())
      if (isF32Tensor(result))
        result.setType(withElementType(result.getType(), lowType));
  }

  /// `value` (f32) in low precision: a converted constant, or a cast placed
  /// after its definition and shared by every low-precision user.
  Value getLowPrecision(Value value) {
    auto it = lowCopies.find(value);
    if (it != lowCopies.end())
      return it->second;
    OpBuilder b(&getContext());
    b.setInsertionPointAfterValue(value);
    Value copy;
    if (auto constant = value.getDefiningOp<ConstantOp>()) {
      if (std::optional<HostTensor> host = readConstant(value)) {
        host->elementType = lowType;
        copy = b.create<ConstantOp>(
            withNameSuffix(constant.getLoc(), ("/" + typeName()).str()),
            writeConstant(*host));
        convertedConstants.push_back(constant);
        ++constantsConverted;
      }
    }
    if (!copy)
      copy = createCast(b, value, lowType);
    lowCopies[value] = copy;
    return copy;
  }

  Value createCast(OpBuilder &b, Value value, Type elementType) {
    ++castsInserted;
    Location loc = value.getDefiningOp() ? value.getDefiningOp()->getLoc()
                                         : value.getLoc();
    std::string suffix = "/to_";
    llvm::raw_string_ostream(suffix) << elementType;
    return b.create<CastOp>(withNameSuffix(loc, suffix),
                            withElementType(value.getType(), elementType),
                            value);
  }

  /// Users outside the low-precision region (f32 ops, the function's
  /// return) get one cast back to f32 per result.
  void castResultsForF32Users(Operation *op,
                              const llvm::SetVector<Operation *> &lowOps) {
    for (Value result : op->getResults()) {
      if (!isFloatTensor(result) || isF32Tensor(result))
        continue;
      SmallVector<OpOperand *> f32Uses;
      for (OpOperand &use : result.getUses())
        if (!lowOps.contains(use.getOwner()))
          f32Uses.push_back(&use);
      if (f32Uses.empty())
        continue;
      OpBuilder b(&getContext());
      b.setInsertionPointAfterValue(result);
      Value f32 = createCast(b, result, b.getF32Type());
      for (OpOperand *use : f32Uses)
        use->set(f32);
    }
  }

  /// One remark per f32 op next to the low-precision region, saying why it
  /// stayed f32, so a user can tell which list kept it there.
  void explainF32Neighbours(Block &body,
                            const llvm::SetVector<Operation *> &lowOps,
                            const llvm::StringSet<> &denied) {
    for (Operation &op : body) {
      if (lowOps.contains(&op) || isa<CastOp, ConstantOp>(op) ||
          !isa<GoptDialect>(op.getDialect()))
        continue;
      bool touchesLow = false;
      for (Value operand : op.getOperands())
        if (auto cast = operand.getDefiningOp<CastOp>())
          touchesLow |= lowOps.contains(cast.getX().getDefiningOp());
      for (Operation *user : op.getUsers())
        if (auto cast = dyn_cast<CastOp>(user))
          for (Operation *castUser : cast->getUsers())
            touchesLow |= lowOps.contains(castUser);
      if (!touchesLow)
        continue;
      StringRef kind = op.getName().stripDialect();
      ListKind list = getListKind(&op);
      if (denied.contains(kind))
        op.emitRemark() << "gopt-mixed-precision: kept " << kind
                        << " in f32: deny= lists it";
      else if (list == ListKind::Deny)
        op.emitRemark() << "gopt-mixed-precision: kept " << kind
                        << " in f32: it is on the deny list (needs f32 "
                           "range or accumulation)";
      else
        op.emitRemark() << "gopt-mixed-precision: kept " << kind << " in f32 ("
                        << getListName(list)
                        << " list): an operand comes from an f32 op";
    }
  }

  Type lowType;
  DenseMap<Value, Value> lowCopies;
  SmallVector<Operation *> convertedConstants;
  int64_t castsInserted = 0;
  int64_t constantsConverted = 0;
};

} // namespace
