//===- GoptNormOps.cpp - Shape functions of the normalization ops ---------===//
//
// layer_norm, instance_norm and lrn (GoptNormOps.td), adapted from the shared
// shape functions (gopt/Shape/ShapeFunctions.h).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

static LogicalResult inferTypes(LayerNormOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(error.check(shape::inferLayerNormShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getScale()),
          shapeOf(adaptor.getBias()), adaptor.getAxis(), result))))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f))
    return error("expects epsilon >= 0, got ", epsilon);
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LayerNormOp)

/// The channel axis of a normalization's input: `data_format` for rank 4,
/// axis 1 otherwise.
static FailureOr<int64_t> normalizationChannelAxis(StringRef dataFormat,
                                                   int64_t rank,
                                                   const ShapeError &error) {
  if (rank == 4) {
    shape::Layout layout;
    if (failed(error.check(shape::parseDataFormat(dataFormat, layout))))
      return failure();
  }
  return shape::normalizationChannelAxis(dataFormat, rank);
}

static LogicalResult inferTypes(InstanceNormOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  FailureOr<int64_t> channelAxis =
      normalizationChannelAxis(adaptor.getDataFormat(), x.size(), error);
  if (failed(channelAxis))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferInstanceNormShape(
          x, shapeOf(adaptor.getScale()), shapeOf(adaptor.getBias()),
          x.size() >= 3 ? *channelAxis : 0, result))))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f))
    return error("expects epsilon >= 0, got ", epsilon);
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(InstanceNormOp)

static LogicalResult inferTypes(LrnOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  if (failed(
          normalizationChannelAxis(adaptor.getDataFormat(), x.size(), error)))
    return failure();
  shape::Dims result;
  if (failed(error.check(shape::inferLrnShape(x, adaptor.getSize(), result))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LrnOp)

//===----------------------------------------------------------------------===//
// Layer norm written out as reductions and elementwise ops
//===----------------------------------------------------------------------===//

namespace {
/// The first of `axes` when they are exactly the trailing axes [first, rank)
/// of a rank-`rank` tensor (negative axes count from the end), else -1.
int64_t trailingAxesStart(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> sorted;
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
      return -1;
    sorted.push_back(a);
  }
  llvm::sort(sorted);
  if (sorted.empty() || sorted.back() != rank - 1)
    return -1;
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] != sorted[i - 1] + 1)
      return -1;
  return sorted.front();
}

/// `v` = reduce_mean(of) over trailing axes, keeping them: returns the first
/// reduced axis and sets `of`, or -1.
int64_t matchTrailingMean(Value v, Value &of) {
  auto mean = v.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepDims())
    return -1;
  auto type = dyn_cast<RankedTensorType>(mean.getX().getType());
  if (!type)
    return -1;
  of = mean.getX();
  return trailingAxesStart(mean.getAxes(), type.getRank());
}

/// Whether `square` is d * d, d^2 or squared_difference(x, mean) for the
/// centered `d` = x - mean.
bool isSquareOfCentered(Value square, SubOp centered) {
  Value d = centered.getResult();
  if (auto mul = square.getDefiningOp<MulOp>())
    return mul.getLhs() == d && mul.getRhs() == d;
  if (auto pow = square.getDefiningOp<PowOp>())
    return pow.getLhs() == d && isSplatOf(pow.getRhs(), 2.0);
  if (auto diff = square.getDefiningOp<SquaredDifferenceOp>())
    return (diff.getLhs() == centered.getLhs() &&
            diff.getRhs() == centered.getRhs()) ||
           (diff.getRhs() == centered.getLhs() &&
            diff.getLhs() == centered.getRhs());
  return false;
}

/// The float value of a constant splat, if `v` is one.
std::optional<double> splatValue(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps), or the same times
/// rsqrt(...): PyTorch's LayerNorm before opset 17 and TensorFlow's
/// hand-written layer norms. Becomes layer_norm(x, 1, 0), one pass over the
/// data instead of eight; the scale and shift that usually follow are
/// absorbed by the two patterns below. The statistics are computed in f32
/// either way; only the rounding of the intermediate steps differs.
template <typename RootOp>
struct FuseDecomposedLayerNorm : public OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(RootOp op,
                                PatternRewriter &rewriter) const override {
    constexpr bool kDivides = std::is_same_v<RootOp, DivOp>;
    for (auto [lhs, rhs] : {std::pair{op.getLhs(), op.getRhs()},
                            std::pair{op.getRhs(), op.getLhs()}}) {
      if (kDivides && lhs != op.getLhs())
        break;
      auto centered = lhs.template getDefiningOp<SubOp>();
      if (!centered || centered.getType() != op.getType())
        continue;
      Value x = centered.getLhs(), meanOf;
      int64_t axis = matchTrailingMean(centered.getRhs(), meanOf);
      if (axis < 0 || meanOf != x || x.getType() != op.getType())
        continue;
      Value root;
      if constexpr (kDivides) {
        auto sqrt = rhs.template getDefiningOp<SqrtOp>();
        root = sqrt ? sqrt.getX() : Value();
      } else {
        auto rsqrt = rhs.template getDefiningOp<RsqrtOp>();
        root = rsqrt ? rsqrt.getX() : Value();
      }
      auto shifted = root ? root.getDefiningOp<AddOp>() : AddOp();
      if (!shifted)
        continue;
      for (auto [variance, epsilon] :
           {std::pair{shifted.getLhs(), shifted.getRhs()},
            std::pair{shifted.getRhs(), shifted.getLhs()}}) {
        std::optional<double> eps = splatValue(epsilon);
        Value square;
        if (!eps || *eps < 0 || matchTrailingMean(variance, square) != axis ||
            !isSquareOfCentered(square, centered) ||
            cast<ShapedType>(epsilon.getType()).getNumElements() != 1)
          continue;
        auto type = cast<RankedTensorType>(x.getType());
        auto unit = RankedTensorType::get({1}, type.getElementType());
        Location loc = op.getLoc();
        Value one = rewriter.create<ConstantOp>(
            loc, DenseElementsAttr::get(
                     unit, FloatAttr::get(type.getElementType(), 1.0)));
        Value zero = rewriter.create<ConstantOp>(
            loc, DenseElementsAttr::get(
                     unit, FloatAttr::get(type.getElementType(), 0.0)));
        rewriter.replaceOpWithNewOp<LayerNormOp>(
            op, type, x, one, zero, rewriter.getI64IntegerAttr(axis),
            rewriter.getF32FloatAttr(static_cast<float>(*eps)));
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not a decomposed layer norm");
  }
};

/// `operand` as a layer norm's scale or bias over the trailing dimensions
/// from `axis` of `type`: the same values without leading unit dimensions,
/// or null when it also varies along a dimension before `axis`.
Value asNormalizedOperand(Value operand, RankedTensorType type, int64_t axis,
                          PatternRewriter &rewriter, Location loc) {
  auto operandType = dyn_cast<RankedTensorType>(operand.getType());
  if (!operandType || !operandType.hasStaticShape() ||
      operandType.getElementType() != type.getElementType())
    return {};
  int64_t kept = type.getRank() - axis, rank = operandType.getRank();
  ArrayRef<int64_t> shape = operandType.getShape();
  for (int64_t i = 0; i < rank - kept; ++i)
    if (shape[i] != 1)
      return {};
  if (rank <= kept)
    return operand;
  ArrayRef<int64_t> trailing = shape.take_back(kept);
  return rewriter.create<ReshapeOp>(
      loc, RankedTensorType::get(trailing, type.getElementType()), operand,
      rewriter.getDenseI64ArrayAttr(trailing));
}

/// layer_norm(x, 1, 0) * gamma -> layer_norm(x, gamma, 0), and
/// layer_norm(x, s, 0) + beta -> layer_norm(x, s, beta), when gamma and
/// beta vary only along the normalized dimensions.
template <typename RootOp>
struct AbsorbIntoLayerNorm : public OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(RootOp op,
                                PatternRewriter &rewriter) const override {
    constexpr bool kScales = std::is_same_v<RootOp, MulOp>;
    for (auto [lhs, rhs] : {std::pair{op.getLhs(), op.getRhs()},
                            std::pair{op.getRhs(), op.getLhs()}}) {
      auto norm = lhs.template getDefiningOp<LayerNormOp>();
      if (!norm || !norm->hasOneUse() || norm.getType() != op.getType() ||
          !isSplatOf(norm.getBias(), 0.0) ||
          (kScales && !isSplatOf(norm.getScale(), 1.0)))
        continue;
      auto type = cast<RankedTensorType>(norm.getType());
      int64_t axis = static_cast<int64_t>(norm.getAxis()); // I64Attr: uint64_t
      if (axis < 0)
        axis += type.getRank();
      Value operand =
          asNormalizedOperand(rhs, type, axis, rewriter, op.getLoc());
      if (!operand)
        continue;
      rewriter.replaceOpWithNewOp<LayerNormOp>(
          op, type, norm.getX(), kScales ? operand : norm.getScale(),
          kScales ? norm.getBias() : operand, norm.getAxisAttr(),
          norm.getEpsilonAttr());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no layer norm to absorb into");
  }
};
} // namespace

void LayerNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FuseDecomposedLayerNorm<DivOp>, FuseDecomposedLayerNorm<MulOp>,
              AbsorbIntoLayerNorm<MulOp>, AbsorbIntoLayerNorm<AddOp>>(context);
}
