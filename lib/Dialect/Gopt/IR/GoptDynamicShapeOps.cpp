//===- GoptDynamicShapeOps.cpp - shapes computed at run time --------------===//
//
// gopt.dynamic_reshape (GoptDynamicShapeOps.td): its MLIR adapter over the
// shared shape function in lib/Shape/DynamicShapeShapes.cpp, and the
// canonicalization to gopt.reshape once the target shape is a constant.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

/// The target shape's entries when the shape operand is a constant.
static std::optional<SmallVector<int64_t>> constantTarget(Value shape) {
  DenseIntElementsAttr dense;
  if (!matchPattern(shape, m_Constant(&dense)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

static LogicalResult inferTypes(DynamicReshapeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> target = shapeOf(adaptor.getShape());
  if (target.size() != 1 || ShapedType::isDynamic(target[0]))
    return error("expects shape to be a 1-D tensor of static length, got ",
                 adaptor.getShape().getType());
  if (target[0] > shape::kMaxRank)
    return error("would have rank ", target[0], "; at most ", shape::kMaxRank,
                 " is supported");
  shape::Dims result(target[0], shape::kDynamic);
  if (std::optional<SmallVector<int64_t>> values =
          constantTarget(adaptor.getShape()))
    if (failed(error.check(shape::inferDynamicReshapeShape(
            shapeOf(adaptor.getX()), *values, adaptor.getAllowZero(), result))))
      return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DynamicReshapeOp)

namespace {
/// A constant target shape is a gopt.reshape: ONNX's 0 entries become the
/// operand's static dimension (or the one -1 when that dimension is
/// dynamic), so the static path (folding, layout, fusion) sees it.
struct DynamicReshapeOfConstant : public OpRewritePattern<DynamicReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DynamicReshapeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> target = constantTarget(op.getShape());
    if (!target)
      return rewriter.notifyMatchFailure(op, "target shape is not a constant");
    ArrayRef<int64_t> in = shapeOf(op.getX());
    SmallVector<int64_t> shape(*target);
    int inferred = llvm::count(shape, -1);
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (d != 0 || op.getAllowZero())
        continue;
      if (i >= in.size())
        return rewriter.notifyMatchFailure(op, "0 copies a missing dimension");
      if (!ShapedType::isDynamic(in[i])) {
        d = in[i];
      } else if (inferred++) {
        return rewriter.notifyMatchFailure(
            op, "more than one dimension known only at run time");
      } else {
        d = -1;
      }
    }
    // The declared type may be more static than reshape's inferred one.
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, op.getType(), op.getX(), rewriter.getDenseI64ArrayAttr(shape));
    return success();
  }
};
} // namespace

void DynamicReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<DynamicReshapeOfConstant>(context);
}

//===----------------------------------------------------------------------===//
// Dynamic ops (Gopt_DynamicOp) and gopt.range
//===----------------------------------------------------------------------===//

#include "gopt/Shape/DynamicOps.h"

namespace {
enum class DynamicAttrKind { kInt, kInts, kFloat, kFloats };
struct DynamicAttrSpec {
  const char *name;
  DynamicAttrKind kind;
};
/// A dynamic op, its static op, the value operands and the attributes they
/// become, the static op's numeric attributes (to build them), the adapter.
struct DynamicOpInfo {
  const char *name;
  const char *staticName;
  int numValues;
  int operands[5];
  const char *attrs[5];
  int numStaticAttrs;
  DynamicAttrSpec staticAttrs[6];
  shape::ValueAttrAdapter adapter;
};
#include "gopt/runtime/DynamicOps.inc"

const DynamicOpInfo *findDynamicOp(StringRef name) {
  for (const DynamicOpInfo &info : kDynamicOps)
    if (name == info.name)
      return &info;
  return nullptr;
}
} // namespace

LogicalResult gopt::detail::inferDynamicOpTypes(
    StringRef opName, ValueRange operands, bool keepDims, StringRef rankRule,
    StringRef elementRule, std::optional<Location> loc,
    SmallVectorImpl<Type> &inferred) {
  ShapeError error(loc, opName);
  auto rankOf = [&](unsigned i) -> std::optional<int64_t> {
    auto type = dyn_cast<RankedTensorType>(operands[i].getType());
    if (!type)
      return std::nullopt;
    return type.getRank();
  };
  // A value operand: a scalar or a 1-D tensor of static length.
  auto lengthOf = [&](unsigned i) -> std::optional<int64_t> {
    auto type = dyn_cast<RankedTensorType>(operands[i].getType());
    if (!type || type.getRank() > 1 ||
        (type.getRank() == 1 && type.isDynamicDim(0)))
      return std::nullopt;
    return type.getRank() ? type.getDimSize(0) : 1;
  };
  const DynamicOpInfo *info = findDynamicOp(opName);
  if (!info)
    return error("is not a dynamic op of DynamicOps.inc");
  for (int i = 0; i < info->numValues; ++i)
    if (info->operands[i] < int(operands.size()) &&
        !lengthOf(info->operands[i]))
      return error("expects operand #", info->operands[i], " ('",
                   info->attrs[i],
                   "') to be a scalar or a 1-D tensor of static length, got ",
                   operands[info->operands[i]].getType());
  std::optional<int64_t> x = rankOf(0), n = lengthOf(1);
  std::optional<int64_t> rank;
  if (int64_t fixed; !rankRule.getAsInteger(10, fixed))
    rank = fixed; // a result rank of its own ("1", "4")
  else if (rankRule == "operand:0")
    rank = x;
  else if (rankRule == "length:1")
    rank = n;
  else if (x && n && rankRule == "max(operand:0,length:1)")
    rank = std::max(*x, *n);
  else if (x && n && rankRule == "operand:0+length:1")
    rank = *x + *n;
  else if (x && n && rankRule == "operand:0-length:1")
    rank = *x - *n;
  else if (x && n && rankRule == "reduce")
    rank = keepDims ? *x : *x - *n;
  if (!rank || *rank < 0)
    return error("cannot give its result a rank (rule '", rankRule,
                 "') from operands ", operands.getTypes());
  if (*rank > shape::kMaxRank)
    return error("would have rank ", *rank, "; at most ", shape::kMaxRank,
                 " is supported");
  SmallVector<int64_t> dims(*rank, ShapedType::kDynamic);
  SmallVector<StringRef> elements;
  elementRule.split(elements, ',');
  for (StringRef element : elements) {
    element = element.trim();
    Type type;
    if (element == "i64")
      type = IntegerType::get(operands[0].getContext(), 64);
    else if (element == "f32")
      type = Float32Type::get(operands[0].getContext());
    else if (element == "operand:0")
      type = elementTypeOf(operands[0]);
    else
      return error("has unknown resultElementType '", element, "'");
    inferred.push_back(RankedTensorType::get(dims, type));
  }
  return success();
}

namespace {
/// A dynamic op whose value operands are constants is its static op, with
/// the attributes the runtime would form (the same adapter).
struct DynamicToStatic : public RewritePattern {
  DynamicToStatic(StringRef name, MLIRContext *context)
      : RewritePattern(name, 1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    const DynamicOpInfo *info = findDynamicOp(op->getName().getStringRef());
    if (!info)
      return failure();
    shape::ValueAttrs values;
    for (int i = 0; i < info->numValues; ++i) {
      DenseElementsAttr dense;
      if (info->operands[i] >= int(op->getNumOperands()) ||
          !matchPattern(op->getOperand(info->operands[i]), m_Constant(&dense)))
        return rewriter.notifyMatchFailure(op, "a value is not a constant");
      shape::ValueAttr value;
      value.name = info->attrs[i];
      if (dense.getElementType().isSignlessInteger()) {
        for (const APInt &v : dense.getValues<APInt>()) {
          value.ints.push_back(v.getSExtValue());
          value.floats.push_back(double(value.ints.back()));
        }
      } else if (isa<FloatType>(dense.getElementType())) {
        value.isInteger = false;
        for (const APFloat &v : dense.getValues<APFloat>())
          value.floats.push_back(v.convertToDouble());
      } else {
        return rewriter.notifyMatchFailure(op, "a value of unknown type");
      }
      values.push_back(std::move(value));
    }
    if (info->adapter) {
      std::vector<shape::Dims> operandShapes;
      for (Value v : op->getOperands()) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type)
          return rewriter.notifyMatchFailure(op, "an unranked operand");
        operandShapes.emplace_back(type.getShape().begin(),
                                   type.getShape().end());
      }
      if (info->adapter(operandShapes, values).failed())
        return rewriter.notifyMatchFailure(op, "the values do not adapt");
    }
    OperationState state(op->getLoc(), info->staticName);
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (!llvm::is_contained(ArrayRef<int>(info->operands, info->numValues),
                              int(i)))
        state.addOperands(v);
    state.addAttributes(op->getAttrs());
    for (const shape::ValueAttr &value : values) {
      const DynamicAttrSpec *spec = nullptr;
      for (int a = 0; a < info->numStaticAttrs; ++a)
        if (value.name == info->staticAttrs[a].name)
          spec = &info->staticAttrs[a];
      if (!spec)
        return rewriter.notifyMatchFailure(op, "no such static attribute");
      bool scalar = spec->kind == DynamicAttrKind::kInt ||
                    spec->kind == DynamicAttrKind::kFloat;
      if (scalar && value.floats.size() != 1)
        return rewriter.notifyMatchFailure(op, "not one element");
      Attribute attr;
      switch (spec->kind) {
      case DynamicAttrKind::kInt:
        if (!value.isInteger)
          return failure();
        attr = rewriter.getI64IntegerAttr(value.ints[0]);
        break;
      case DynamicAttrKind::kInts:
        if (!value.isInteger)
          return failure();
        attr = rewriter.getDenseI64ArrayAttr(value.ints);
        break;
      case DynamicAttrKind::kFloat:
        attr = rewriter.getF64FloatAttr(value.floats[0]);
        break;
      case DynamicAttrKind::kFloats: {
        SmallVector<float> f(value.floats.begin(), value.floats.end());
        attr = rewriter.getDenseF32ArrayAttr(f);
        break;
      }
      }
      state.addAttribute(value.name, attr);
    }
    state.addTypes(op->getResultTypes());
    Operation *replacement = rewriter.create(state);
    // Values the static op rejects (its verifier's message would only
    // repeat what the runtime says) keep the dynamic op.
    ScopedDiagnosticHandler silence(op->getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(mlir::verify(replacement))) {
      rewriter.eraseOp(replacement);
      return rewriter.notifyMatchFailure(op, "the static op does not verify");
    }
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};
} // namespace

void gopt::detail::addDynamicToStaticPattern(RewritePatternSet &results,
                                             MLIRContext *context,
                                             StringRef opName) {
  results.add<DynamicToStatic>(opName, context);
}

LogicalResult RangeOp::verify() {
  auto type = cast<TensorType>(getY().getType());
  if (!type.hasRank() || type.getRank() != 1)
    return emitOpError("expects a 1-D result, got ") << type;
  shape::Dims dims;
  shape::Result r = shape::inferRangeShape(getStart().convertToDouble(),
                                           getLimit().convertToDouble(),
                                           getDelta().convertToDouble(), dims);
  if (r.failed())
    return emitOpError(r.message());
  if (!type.isDynamicDim(0) && type.getDimSize(0) != dims[0])
    return emitOpError("has ")
           << dims[0] << " elements, its type says " << type;
  return success();
}
