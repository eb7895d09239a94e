//===- GoptControlFlowOps.cpp - conditionals and loops --------------------===//
//
// gopt.if, gopt.loop and gopt.yield (GoptControlFlowOps.td): the verifiers
// that tie the regions' arguments and yields to the op's operands and
// results, and the folding of an if with a constant condition.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

/// Same element type and rank, and equal sizes where both are static: a
/// value of type `actual` can stand where `declared` is expected.
static bool isCompatible(Type declared, Type actual) {
  auto d = dyn_cast<RankedTensorType>(declared);
  auto a = dyn_cast<RankedTensorType>(actual);
  if (!d || !a || d.getElementType() != a.getElementType() ||
      d.getRank() != a.getRank())
    return false;
  for (auto [x, y] : llvm::zip(d.getShape(), a.getShape()))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

/// "(t1, t2)": a type list as the diagnostics show it.
static std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return text;
}

/// The region's block takes `argTypes` and yields values compatible with
/// `yieldTypes`.
static LogicalResult verifyRegion(Operation *op, Region &region,
                                  StringRef regionName, TypeRange argTypes,
                                  TypeRange yieldTypes, StringRef argsWhat,
                                  StringRef yieldsWhat) {
  Block &block = region.front();
  if (block.getArgumentTypes() != argTypes)
    return op->emitOpError()
           << regionName << " takes " << typeList(block.getArgumentTypes())
           << " but expects " << argsWhat << " " << typeList(argTypes);
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << regionName << " must end in gopt.yield";
  if (yield.getValues().size() != yieldTypes.size())
    return op->emitOpError() << regionName << " yields "
                             << yield.getValues().size() << " values, expects "
                             << yieldTypes.size() << " (" << yieldsWhat << ")";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yieldTypes, yield.getValues().getTypes())))
    if (!isCompatible(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError()
             << regionName << " yields " << std::get<1>(pair) << " as value #"
             << i << ", incompatible with " << std::get<0>(pair);
  return success();
}

LogicalResult IfOp::verify() {
  TypeRange captures = getCaptures().getTypes();
  if (failed(verifyRegion(*this, getThenRegion(), "then region", captures,
                          getResultTypes(), "the captures", "the results")) ||
      failed(verifyRegion(*this, getElseRegion(), "else region", captures,
                          getResultTypes(), "the captures", "the results")))
    return failure();
  return success();
}

LogicalResult LoopOp::verify() {
  size_t numCarried = getInitial().size();
  if (getNumResults() < numCarried)
    return emitOpError() << "has " << getNumResults() << " results but "
                         << numCarried << " carried values";
  SmallVector<Type> args = {getMaxTripCount().getType(), getCond().getType()};
  llvm::append_range(args, getInitial().getTypes());
  llvm::append_range(args, getCaptures().getTypes());
  // The body yields the condition, the next carried values, and one slice
  // per scan output.
  SmallVector<Type> yields = {getCond().getType()};
  llvm::append_range(yields, getInitial().getTypes());
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end in gopt.yield");
  size_t numScans = getNumResults() - numCarried;
  if (yield.getValues().size() != 1 + numCarried + numScans)
    return emitOpError() << "body yields " << yield.getValues().size()
                         << " values, expects " << 1 + numCarried + numScans
                         << " (the condition, " << numCarried
                         << " carried values, " << numScans << " scan outputs)";
  for (Value scan : yield.getValues().drop_front(1 + numCarried))
    yields.push_back(scan.getType());
  if (failed(verifyRegion(*this, getBody(), "body", args, yields,
                          "the iteration number, the condition, the carried "
                          "values and the captures",
                          "")))
    return failure();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getInitial().getTypes(), getResultTypes())))
    if (!isCompatible(std::get<1>(pair), std::get<0>(pair)))
      return emitOpError() << "result #" << i << " " << std::get<1>(pair)
                           << " does not match carried value "
                           << std::get<0>(pair);
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getValues().drop_front(1 + numCarried).getTypes(),
                     getResults().drop_front(numCarried).getTypes()))) {
    auto slice = cast<RankedTensorType>(std::get<0>(pair));
    auto stacked = cast<RankedTensorType>(std::get<1>(pair));
    if (stacked.getRank() != slice.getRank() + 1 ||
        !isCompatible(stacked.clone(stacked.getShape().drop_front()), slice))
      return emitOpError() << "scan output #" << i << " " << stacked
                           << " is not the body's " << slice
                           << " stacked along a new leading dimension";
  }
  if (numScans > 0 && !getCondInvariant())
    return emitOpError("has scan outputs, whose leading dimension is the "
                       "number of iterations, so it needs cond_invariant "
                       "(the body must not end the loop early)");
  if (getCondInvariant()) {
    Value next = yield.getValues().front();
    DenseIntElementsAttr constant;
    bool yieldsArgument = next == body.getArgument(1);
    bool yieldsTrue = matchPattern(next, m_Constant(&constant)) &&
                      constant.getNumElements() == 1 &&
                      !constant.getValues<APInt>()[0].isZero();
    if (!yieldsArgument && !yieldsTrue)
      return emitOpError("is cond_invariant but its body yields a condition "
                         "other than its condition argument or true");
  }
  return success();
}

namespace {
/// An if whose condition is a constant is the chosen region, inlined.
struct FoldConstantIf : public OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    DenseIntElementsAttr cond;
    if (!matchPattern(op.getCond(), m_Constant(&cond)))
      return rewriter.notifyMatchFailure(op, "condition is not a constant");
    Region &chosen = cond.getValues<APInt>()[0].isZero() ? op.getElseRegion()
                                                         : op.getThenRegion();
    Block &block = chosen.front();
    IRMapping mapping;
    mapping.map(block.getArguments(), op.getCaptures());
    for (Operation &inner : block.without_terminator())
      rewriter.clone(inner, mapping);
    SmallVector<Value> results;
    for (auto [value, result] :
         llvm::zip(cast<YieldOp>(block.getTerminator()).getValues(),
                   op.getResults())) {
      Value mapped = mapping.lookupOrDefault(value);
      // A yield more static than the result: keep the result's type for
      // the users.
      if (mapped.getType() != result.getType())
        mapped =
            rewriter.create<IdentityOp>(op.getLoc(), result.getType(), mapped);
      results.push_back(mapped);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void IfOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                       MLIRContext *context) {
  results.add<FoldConstantIf>(context);
}
