//===- GoptOps.cpp - gopt op type inference, verifiers, folders -----------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "OpUtils.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <array>
#include <cmath>

using namespace mlir;

namespace gopt {

bool areCompatibleReturnTypes(TypeRange inferred, TypeRange declared) {
  if (inferred.size() != declared.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, declared)) {
    if (a == b)
      continue;
    // An unranked inferred type is the placeholder of a failed shape
    // function; verify() reports why.
    if (isa<UnrankedTensorType>(a))
      continue;
    auto ta = dyn_cast<RankedTensorType>(a);
    auto tb = dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        failed(verifyCompatibleShape(ta.getShape(), tb.getShape())))
      return false;
  }
  return true;
}

SmallVector<int64_t, 4> getI64ArrayOr(DenseI64ArrayAttr attr,
                                      ArrayRef<int64_t> defaults) {
  ArrayRef<int64_t> values = attr ? attr.asArrayRef() : defaults;
  return SmallVector<int64_t, 4>(values.begin(), values.end());
}

LogicalResult verifyDeviceAttr(Operation *op) {
  Attribute device = op->getAttr(GoptDialect::getDeviceAttrName());
  if (!device)
    return success();
  auto name = dyn_cast<StringAttr>(device);
  if (!name || (name.getValue() != "cpu" && name.getValue() != "gpu"))
    return op->emitOpError("expects device \"cpu\" or \"gpu\", got ") << device;
  return success();
}

} // namespace gopt

using namespace gopt;

using namespace gopt::detail;

namespace gopt::detail {
template <>
unsigned getExpectedResultCount<BatchNormOp>(BatchNormOp::Adaptor adaptor) {
  return adaptor.getTraining() ? 5 : 1;
}
} // namespace gopt::detail

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult
ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location>, ValueRange,
                             DictionaryAttr attrs, OpaqueProperties properties,
                             RegionRange,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  ConstantOp::Adaptor adaptor(ValueRange(), attrs, properties);
  if (!adaptor.getValueAttr())
    return failure();
  inferredReturnTypes.push_back(adaptor.getValueAttr().getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  if (!isa<RankedTensorType>(getValue().getType()))
    return emitOpError("expects a ranked tensor value, got ")
           << getValue().getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

Operation *GoptDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

//===----------------------------------------------------------------------===//
// Pass-through ops
//===----------------------------------------------------------------------===//

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getX(); }

OpFoldResult PadOp::fold(FoldAdaptor) {
  if (getX().getType() != getType() ||
      llvm::any_of(getPads(), [](int64_t p) { return p != 0; }))
    return {};
  return getX();
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("expects ratio in [0, 1), got ") << ratio;
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (!getTraining() || getRatio().isZero())
    return getX();
  return {};
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("expects approximate \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

template <typename SoftmaxLikeOp>
static LogicalResult verifySoftmaxAxis(SoftmaxLikeOp op) {
  ShapeError error(op.getLoc(), op->getName().getStringRef());
  return normalizeAxis(static_cast<int64_t>(op.getAxis()),
                       shapeOf(op.getX()).size(), "axis", error);
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

LogicalResult ClipOp::verify() {
  if (getMin().convertToFloat() > getMax().convertToFloat())
    return emitOpError("expects min <= max, got min ")
           << getMin().convertToFloat() << " and max "
           << getMax().convertToFloat();
  return success();
}

LogicalResult TransferOp::verify() {
  for (StringRef device : {getFrom(), getTo()})
    if (device != "cpu" && device != "gpu")
      return emitOpError("expects devices \"cpu\" or \"gpu\", got \"")
             << device << "\"";
  return success();
}

OpFoldResult TransferOp::fold(FoldAdaptor) {
  // A transfer to the device the value is already on is a no-op.
  if (getFrom() == getTo())
    return getX();
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

namespace gopt::detail {
LogicalResult inferBroadcastTypes(Value lhs, Value rhs, const ShapeError &error,
                                  SmallVectorImpl<Type> &inferred) {
  if (elementTypeOf(lhs) != elementTypeOf(rhs))
    return error("expects operands of one element type, got ",
                 elementTypeOf(lhs), " and ", elementTypeOf(rhs));
  Shape shape;
  if (failed(inferBroadcastShape(shapeOf(lhs), shapeOf(rhs), shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(lhs)));
  return success();
}
} // namespace gopt::detail

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getX().getType() == getY().getType())
    return getX();
  return {};
}

namespace {
/// cast(cast(x: A -> B) -> A) is x when B represents every value of A
/// exactly (e.g. f16 -> f32 -> f16); narrowing round trips are kept.
struct FoldLosslessCastRoundTrip : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool widensExactly(Type from, Type to) {
    if (from == to)
      return true;
    if (from.isF16() || from.isBF16())
      return to.isF32();
    if (from.isF32())
      return to.isF64();
    if (from.isInteger(1))
      return isa<IntegerType>(to) || isa<FloatType>(to);
    auto fromInt = dyn_cast<IntegerType>(from);
    if (!fromInt)
      return false;
    unsigned width = fromInt.getWidth();
    if (auto toInt = dyn_cast<IntegerType>(to)) {
      // Signed to unsigned loses the negative values; unsigned to signed
      // needs one more bit.
      if (fromInt.isUnsigned())
        return toInt.isUnsigned() ? toInt.getWidth() >= width
                                  : toInt.getWidth() > width;
      return !toInt.isUnsigned() && toInt.getWidth() >= width;
    }
    // Every integer of up to 8 bits is exact in f16 and bf16, up to 16 in
    // f32, up to 32 in f64.
    if (width <= 8 && (to.isF16() || to.isBF16()))
      return true;
    if (width <= 16 && to.isF32())
      return true;
    return width <= 32 && to.isF64();
  }

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<CastOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a cast");
    Type original = elementTypeOf(inner.getX());
    Type middle = elementTypeOf(inner.getY());
    if (inner.getX().getType() != op.getY().getType())
      return rewriter.notifyMatchFailure(op, "not a round trip");
    if (!widensExactly(original, middle))
      return rewriter.notifyMatchFailure(op, "inner cast loses values");
    rewriter.replaceOp(op, inner.getX());
    return success();
  }
};
} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldLosslessCastRoundTrip>(context);
}

//===----------------------------------------------------------------------===//
// ShapeOp
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  int64_t rank = shapeOf(adaptor.getX()).size();
  inferred.push_back(tensorOf({rank}, IntegerType::get(context, 64)));
  return success();
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto type = cast<RankedTensorType>(getX().getType());
  if (!type.hasStaticShape())
    return {};
  return DenseIntElementsAttr::get(cast<RankedTensorType>(getType()),
                                   type.getShape());
}

//===----------------------------------------------------------------------===//
// Shape-changing ops
//===----------------------------------------------------------------------===//

static LogicalResult inferTypes(ReshapeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferReshapeShape(shapeOf(adaptor.getX()), adaptor.getShape(),
                               shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ReshapeOp)

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  auto type = cast<RankedTensorType>(getType());
  if (getX().getType() == type && type.hasStaticShape())
    return getX();
  // Reshaping a constant is a constant.
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX()))
    if (type.hasStaticShape())
      return dense.reshape(type);
  return {};
}

namespace {
/// reshape(reshape(x)) is one reshape of x: only the final shape matters.
struct CombineReshapeOfReshape : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a reshape");
    rewriter.modifyOpInPlace(op,
                             [&] { op.getXMutable().assign(inner.getX()); });
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<CombineReshapeOfReshape>(context);
}

static LogicalResult inferTypes(FlattenOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferFlattenShape(shapeOf(adaptor.getX()),
                               static_cast<int64_t>(adaptor.getAxis()), shape,
                               error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(FlattenOp)

static LogicalResult inferTypes(TransposeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferTransposeShape(shapeOf(adaptor.getX()), adaptor.getPerm(),
                                 shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(TransposeOp)

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getX();
}

namespace {
/// transpose(transpose(x, p1), p2) is transpose(x, p1 o p2); the identity
/// permutation then folds away.
struct ComposeTransposeOfTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    SmallVector<int64_t> composed;
    for (int64_t p : op.getPerm())
      composed.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getX(),
                                             composed);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposeOfTranspose>(context);
}

static LogicalResult inferTypes(ConcatOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return error("expects at least one operand");
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value input : adaptor.getInputs())
    shapes.push_back(shapeOf(input));
  Shape shape;
  if (failed(inferConcatShape(shapes, static_cast<int64_t>(adaptor.getAxis()),
                              shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getInputs()[0])));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ConcatOp)

static LogicalResult inferTypes(SliceOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferSliceShape(shapeOf(adaptor.getX()), adaptor.getStarts(),
                             adaptor.getEnds(), adaptor.getSteps(), shape,
                             error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(SliceOp)

static LogicalResult inferTypes(PadOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferPadShape(shapeOf(adaptor.getX()), adaptor.getPads(),
                           adaptor.getMode(), shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(PadOp)

//===----------------------------------------------------------------------===//
// DequantizeOp, QuantizeOp
//===----------------------------------------------------------------------===//

/// Both map values of one shape to another element type: f32 for
/// dequantize (the scales' type), i8 for quantize.
template <typename Adaptor>
static LogicalResult inferQuantization(Adaptor adaptor, Type resultElement,
                                       const ShapeError &error,
                                       SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferDequantizeShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getScales()),
          static_cast<int64_t>(adaptor.getAxis()), shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, resultElement));
  return success();
}

static LogicalResult inferTypes(DequantizeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferQuantization(adaptor, elementTypeOf(adaptor.getScales()), error,
                           inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(DequantizeOp)

static LogicalResult inferTypes(QuantizeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferQuantization(adaptor,
                           IntegerType::get(adaptor.getX().getContext(), 8),
                           error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(QuantizeOp)

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

static LogicalResult inferTypes(Conv2DOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  SmallVector<Value> operands = {adaptor.getInput(), adaptor.getFilter()};
  SmallVector<StringRef> names = {"input", "filter"};
  if (adaptor.getBias()) {
    operands.push_back(adaptor.getBias());
    names.push_back("bias");
  }
  if (failed(verifySameElementTypes(operands, names, error)))
    return failure();
  Conv2DParams params;
  params.window.strides = toDims(getI64ArrayOr(
      adaptor.getStridesAttr(), ::gopt::shape::absentWindowAttr("strides")));
  params.window.dilations =
      toDims(getI64ArrayOr(adaptor.getDilationsAttr(),
                           ::gopt::shape::absentWindowAttr("dilations")));
  params.window.padding = adaptor.getPadding();
  params.window.pads = toDims(getI64ArrayOr(
      adaptor.getPadsAttr(), ::gopt::shape::absentWindowAttr("pads")));
  params.groups = static_cast<int64_t>(adaptor.getGroups());
  params.dataFormat = adaptor.getDataFormat();
  params.filterFormat = adaptor.getFilterFormat();
  params.activation = adaptor.getActivation();
  std::optional<ArrayRef<int64_t>> bias;
  if (adaptor.getBias())
    bias = shapeOf(adaptor.getBias());
  Shape shape;
  if (failed(inferConv2DShape(shapeOf(adaptor.getInput()),
                              shapeOf(adaptor.getFilter()), bias, params, shape,
                              error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv2DOp)

namespace {
/// The [top, bottom, left, right] padding of `pad` when it is constant zero
/// padding of the spatial dims only of a rank-4 `dataFormat` tensor, the
/// padding a windowed op's own explicit pads can take over.
FailureOr<std::array<int64_t, 4>>
matchSpatialZeroPad(PadOp pad, StringRef dataFormat, Operation *user,
                    PatternRewriter &rewriter) {
  if (pad.getMode() != "constant" || pad.getValue().convertToFloat() != 0.0f)
    return rewriter.notifyMatchFailure(user, "pad is not zero padding");
  ArrayRef<int64_t> pads = pad.getPads();
  if (pads.size() != 8)
    return rewriter.notifyMatchFailure(user, "pad is not rank 4");
  bool nchw = dataFormat == "NCHW";
  int64_t h = nchw ? 2 : 1, w = nchw ? 3 : 2, c = nchw ? 1 : 3;
  for (int64_t d : {int64_t(0), c})
    if (pads[2 * d] != 0 || pads[2 * d + 1] != 0)
      return rewriter.notifyMatchFailure(user, "pads batch or channels");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return rewriter.notifyMatchFailure(user, "negative pad");
  return std::array<int64_t, 4>{pads[2 * h], pads[2 * h + 1], pads[2 * w],
                                pads[2 * w + 1]};
}

/// conv2d(pad(x)) -> conv2d(x) with the pad added to the conv's explicit
/// pads, when the pad is constant zero and only pads the spatial dims (as
/// TensorFlow graphs write `Pad` + `Conv2D(padding=VALID)` for a strided
/// conv). The conv then reads x in place instead of a padded copy.
struct FoldZeroPadIntoConv2D : public OpRewritePattern<Conv2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().getDefiningOp<PadOp>();
    if (!pad)
      return rewriter.notifyMatchFailure(op, "input is not a pad");
    if (op.getPadding() == "SAME")
      return rewriter.notifyMatchFailure(op, "SAME padding");
    FailureOr<std::array<int64_t, 4>> spatial =
        matchSpatialZeroPad(pad, op.getDataFormat(), op, rewriter);
    if (failed(spatial))
      return failure();
    SmallVector<int64_t, 4> convPads = op.getPadding() == "VALID"
                                           ? SmallVector<int64_t, 4>{0, 0, 0, 0}
                                           : op.getPadsOrDefault();
    for (int i = 0; i < 4; ++i)
      convPads[i] += (*spatial)[i];
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(pad.getX());
      op.setPadding("EXPLICIT");
      op.setPadsAttr(rewriter.getDenseI64ArrayAttr(convPads));
    });
    return success();
  }
};
} // namespace

void Conv2DOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldZeroPadIntoConv2D>(context);
}

namespace {
/// clip(x + 3, 0, 6) or relu6(x + 3): the shifted, clipped ramp of
/// HardSigmoid and HardSwish as PaddlePaddle and PyTorch's older exporters
/// write them; returns x.
Value matchRelu6OfXPlus3(Value v) {
  Value shifted;
  if (auto relu6 = v.getDefiningOp<Relu6Op>())
    shifted = relu6.getX();
  else if (auto clip = v.getDefiningOp<ClipOp>();
           clip && clip.getMin().convertToDouble() == 0.0 &&
           clip.getMax().convertToDouble() == 6.0)
    shifted = clip.getX();
  auto add = shifted ? shifted.getDefiningOp<AddOp>() : AddOp();
  if (!add)
    return {};
  Value x = isSplatOf(add.getRhs(), 3.0)   ? add.getLhs()
            : isSplatOf(add.getLhs(), 3.0) ? add.getRhs()
                                           : Value();
  return x && x.getType() == v.getType() ? x : Value();
}

/// clip(x + 3, 0, 6) / 6 -> hard_sigmoid(x, 1/6, 1/2), and
/// x * clip(x + 3, 0, 6) / 6 -> hard_swish(x): one kernel instead of four,
/// and one pass over the tensor.
struct FuseDecomposedHardSwish : public OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op,
                                PatternRewriter &rewriter) const override {
    if (!isSplatOf(op.getRhs(), 6.0))
      return rewriter.notifyMatchFailure(op, "divisor is not 6");
    Type type = op.getType();
    if (Value x = matchRelu6OfXPlus3(op.getLhs()); x && x.getType() == type) {
      rewriter.replaceOpWithNewOp<HardSigmoidOp>(
          op, type, x, rewriter.getF32FloatAttr(1.0f / 6.0f),
          rewriter.getF32FloatAttr(0.5f));
      return success();
    }
    auto mul = op.getLhs().getDefiningOp<MulOp>();
    if (!mul)
      return rewriter.notifyMatchFailure(op, "no decomposed activation");
    for (auto [x, ramp] : {std::pair{mul.getLhs(), mul.getRhs()},
                           std::pair{mul.getRhs(), mul.getLhs()}})
      if (x.getType() == type && matchRelu6OfXPlus3(ramp) == x) {
        rewriter.replaceOpWithNewOp<HardSwishOp>(op, type, x);
        return success();
      }
    return rewriter.notifyMatchFailure(op, "no decomposed activation");
  }
};
/// Whether `v` is a float splat within f32 rounding of `expected`.
bool isSplatNear(Value v, double expected) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return false;
  double value = attr.getSplatValue<APFloat>().convertToDouble();
  return std::abs(value - expected) <= 1e-6 * std::abs(expected);
}

/// 1 + erf(x / sqrt(2)) (or erf(x * (1 / sqrt(2))) + 1); returns x.
Value matchOnePlusErfOfScaled(Value v) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return {};
  Value erfValue = isSplatOf(add.getRhs(), 1.0)   ? add.getLhs()
                   : isSplatOf(add.getLhs(), 1.0) ? add.getRhs()
                                                  : Value();
  auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
  if (!erf)
    return {};
  Value scaled = erf.getX();
  if (auto div = scaled.getDefiningOp<DivOp>();
      div && isSplatNear(div.getRhs(), std::sqrt(2.0)))
    return div.getLhs();
  if (auto mul = scaled.getDefiningOp<MulOp>()) {
    if (isSplatNear(mul.getRhs(), 1.0 / std::sqrt(2.0)))
      return mul.getLhs();
    if (isSplatNear(mul.getLhs(), 1.0 / std::sqrt(2.0)))
      return mul.getRhs();
  }
  return {};
}

/// x * (1 + erf(x / sqrt(2))) * 0.5, with the three factors multiplied in
/// any order (PyTorch's export of nn.GELU before opset 20 multiplies x by
/// the bracket, then by 0.5) -> gelu(x): one kernel, which the CPU
/// schedule then folds into the matmul before it as a oneDNN post-op,
/// instead of five passes over the tensor.
struct FuseDecomposedGelu : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    // The three factors: the outer product's operand and the inner
    // product's two, tried in every grouping.
    for (auto [inner, outer] : {std::pair{op.getLhs(), op.getRhs()},
                                std::pair{op.getRhs(), op.getLhs()}}) {
      auto product = inner.getDefiningOp<MulOp>();
      if (!product || !product->hasOneUse())
        continue;
      Value factors[3] = {product.getLhs(), product.getRhs(), outer};
      for (int half = 0; half < 3; ++half) {
        if (!isSplatOf(factors[half], 0.5))
          continue;
        Value a = factors[(half + 1) % 3], b = factors[(half + 2) % 3];
        for (auto [x, bracket] : {std::pair{a, b}, std::pair{b, a}})
          if (x.getType() == type && matchOnePlusErfOfScaled(bracket) == x) {
            rewriter.replaceOpWithNewOp<GeluOp>(op, type, x,
                                                rewriter.getStringAttr("none"));
            return success();
          }
      }
    }
    return rewriter.notifyMatchFailure(op, "not a decomposed gelu");
  }
};
} // namespace

void DivOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  // FuseDecomposedGelu is rooted at the last multiply; it is registered
  // here because MulOp declares no canonicalizer of its own.
  results.add<FuseDecomposedHardSwish, FuseDecomposedGelu>(context);
}

namespace {
/// pow(x, c) for a constant splat c of 2, 1 or 0.5: exporters write x^2 for
/// variances (PyTorch's decomposed LayerNorm) and std::pow per element is
/// ~10x a multiply. Only where the exponent does not broadcast x.
struct SimplifyConstantPow : public OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getLhs();
    if (x.getType() != op.getType() ||
        !isa<FloatType>(getElementTypeOrSelf(x.getType())))
      return rewriter.notifyMatchFailure(op, "not a float pow of x's shape");
    if (isSplatOf(op.getRhs(), 2.0)) {
      rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), x, x);
      return success();
    }
    if (isSplatOf(op.getRhs(), 1.0)) {
      rewriter.replaceOp(op, x);
      return success();
    }
    if (isSplatOf(op.getRhs(), 0.5)) {
      rewriter.replaceOpWithNewOp<SqrtOp>(op, op.getType(), x);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "exponent is not 2, 1 or 0.5");
  }
};
} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<SimplifyConstantPow>(context);
}

static LogicalResult inferTypes(BatchNormOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes(
          {adaptor.getX(), adaptor.getScale(), adaptor.getOffset(),
           adaptor.getMean(), adaptor.getVariance()},
          {"x", "scale", "offset", "mean", "variance"}, error)))
    return failure();
  const ::gopt::shape::DimsRef perChannel[4] = {
      shapeOf(adaptor.getScale()), shapeOf(adaptor.getOffset()),
      shapeOf(adaptor.getMean()), shapeOf(adaptor.getVariance())};
  int64_t channels;
  if (failed(error.check(::gopt::shape::inferBatchNormShape(
          shapeOf(adaptor.getX()), perChannel, adaptor.getDataFormat(),
          adaptor.getEpsilon().convertToFloat(),
          adaptor.getMomentum().convertToFloat(), channels))))
    return failure();
  if (adaptor.getCrossReplica() && !adaptor.getTraining())
    return error("cross_replica statistics need the training form "
                 "(training = true)");
  inferred.push_back(adaptor.getX().getType());
  if (adaptor.getTraining())
    inferred.append(4, tensorOf({channels}, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(BatchNormOp)

static LogicalResult inferTypes(BiasAddOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ::gopt::shape::Dims dims;
  if (failed(error.check(::gopt::shape::inferBiasAddShape(
          shapeOf(adaptor.getX()), shapeOf(adaptor.getBias()),
          adaptor.getDataFormat(), dims))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(BiasAddOp)

static LogicalResult inferTypes(MatMulOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferMatMulShape(shapeOf(adaptor.getA()), shapeOf(adaptor.getB()),
                              adaptor.getTransposeA(), adaptor.getTransposeB(),
                              shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getA())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MatMulOp)

/// max_pool and avg_pool share their window attributes and shape function.
template <typename Adaptor>
static LogicalResult inferPoolTypes(Adaptor adaptor, const ShapeError &error,
                                    SmallVectorImpl<Type> &inferred) {
  WindowParams params;
  params.kernel = toDims(getI64ArrayOr(adaptor.getKernelAttr(), {}));
  params.strides = toDims(getI64ArrayOr(
      adaptor.getStridesAttr(), ::gopt::shape::absentWindowAttr("strides")));
  params.dilations = {1, 1};
  params.padding = adaptor.getPadding();
  params.pads = toDims(getI64ArrayOr(adaptor.getPadsAttr(),
                                     ::gopt::shape::absentWindowAttr("pads")));
  params.ceilMode = adaptor.getCeilMode();
  Shape shape;
  if (failed(inferPoolShape(shapeOf(adaptor.getX()), params,
                            adaptor.getDataFormat(), shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(adaptor.getX())));
  return success();
}

static LogicalResult inferTypes(MaxPoolOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPoolTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxPoolOp)

static LogicalResult inferTypes(AvgPoolOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPoolTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(AvgPoolOp)

namespace {
/// avg_pool(pad(x)) -> avg_pool(x) with the pad as the pool's own padding,
/// counted in the divisor (count_include_pad): PyTorch exports
/// avg_pool2d(padding=p) as a zero Pad and an unpadded AveragePool
/// (Inception's pool branches). The pool then reads x in place, in the
/// layout its producer left it, instead of a padded plain copy.
struct FoldZeroPadIntoAvgPool : public OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getX().getDefiningOp<PadOp>();
    if (!pad)
      return rewriter.notifyMatchFailure(op, "input is not a pad");
    if (op.getPadding() == "SAME")
      return rewriter.notifyMatchFailure(op, "SAME padding");
    // ceil_mode's extra end is never counted, padding always is: keep the
    // two apart.
    if (op.getCeilMode())
      return rewriter.notifyMatchFailure(op, "ceil_mode");
    SmallVector<int64_t, 4> poolPads = op.getPadding() == "VALID"
                                           ? SmallVector<int64_t, 4>{0, 0, 0, 0}
                                           : op.getPadsOrDefault();
    // Padding the pool has of its own must be counted too, as the pad's is.
    if (!op.getCountIncludePad() &&
        llvm::any_of(poolPads, [](int64_t p) { return p != 0; }))
      return rewriter.notifyMatchFailure(op, "pool excludes its own padding");
    FailureOr<std::array<int64_t, 4>> spatial =
        matchSpatialZeroPad(pad, op.getDataFormat(), op, rewriter);
    if (failed(spatial))
      return failure();
    for (int i = 0; i < 4; ++i)
      poolPads[i] += (*spatial)[i];
    // A window wholly in padding is no window for oneDNN; the pad and an
    // unpadded pool stay faster than the reference pool.
    ArrayRef<int64_t> kernel = op.getKernel();
    if (kernel.size() != 2 || poolPads[0] >= kernel[0] ||
        poolPads[1] >= kernel[0] || poolPads[2] >= kernel[1] ||
        poolPads[3] >= kernel[1])
      return rewriter.notifyMatchFailure(op, "padding as large as the window");
    rewriter.modifyOpInPlace(op, [&] {
      op.getXMutable().assign(pad.getX());
      op.setPadding("EXPLICIT");
      op.setPadsAttr(rewriter.getDenseI64ArrayAttr(poolPads));
      op.setCountIncludePad(true);
    });
    return success();
  }
};
} // namespace

void AvgPoolOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldZeroPadIntoAvgPool>(context);
}

static LogicalResult inferTypes(GlobalAvgPoolOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  ::gopt::shape::Dims dims;
  if (failed(error.check(::gopt::shape::inferGlobalPoolShape(
          shapeOf(adaptor.getX()), adaptor.getDataFormat(), dims))))
    return failure();
  inferred.push_back(tensorOf(dims, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(GlobalAvgPoolOp)

LogicalResult
gopt::detail::inferReductionTypes(Value x, ArrayRef<int64_t> axes,
                                  bool keepDims, const ShapeError &error,
                                  SmallVectorImpl<Type> &inferred) {
  Shape shape;
  if (failed(inferReduceShape(shapeOf(x), axes, keepDims, shape, error)))
    return failure();
  inferred.push_back(tensorOf(shape, elementTypeOf(x)));
  return success();
}

#define GET_OP_CLASSES
#include "gopt/Dialect/Gopt/IR/GoptOps.cpp.inc"
