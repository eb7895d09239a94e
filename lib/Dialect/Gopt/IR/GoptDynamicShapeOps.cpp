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
