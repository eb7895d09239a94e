//===- GoptTrainingOps.cpp - shape functions of the training ops ----------===//
//
// Losses, gradients and optimizer updates (GoptTrainingOps.td). Gradient ops
// check their operands against the forward op's shape function, so a
// gradient whose shapes could not come from the forward op is rejected.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

#include "gopt/Shape/TrainingShapes.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <> unsigned getExpectedResultCount<SgdUpdateOp>(SgdUpdateOp::Adaptor) {
  return 2;
}
template <>
unsigned getExpectedResultCount<AdamUpdateOp>(AdamUpdateOp::Adaptor) {
  return 3;
}
template <>
unsigned getExpectedResultCount<LossScaleUpdateOp>(LossScaleUpdateOp::Adaptor) {
  return 2;
}
template <>
unsigned getExpectedResultCount<BatchNormGradOp>(BatchNormGradOp::Adaptor) {
  return 3;
}
} // namespace gopt::detail

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

static LogicalResult verifyLogitsAndLabels(Value logits, Value labels,
                                           const ShapeError &error) {
  return error.check(
      shape::verifyLogitsAndLabels(shapeOf(logits), shapeOf(labels)));
}

static LogicalResult inferTypes(SoftmaxCrossEntropyOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyLogitsAndLabels(adaptor.getLogits(), adaptor.getLabels(),
                                   error)))
    return failure();
  if (!elementTypeOf(adaptor.getLogits()).isF32())
    return error("expects f32 logits, got ",
                 elementTypeOf(adaptor.getLogits()));
  inferred.push_back(tensorOf({}, elementTypeOf(adaptor.getLogits())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(SoftmaxCrossEntropyOp)

static LogicalResult inferTypes(SoftmaxCrossEntropyGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyLogitsAndLabels(adaptor.getLogits(), adaptor.getLabels(),
                                   error)))
    return failure();
  inferred.push_back(adaptor.getLogits().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(SoftmaxCrossEntropyGradOp)

static LogicalResult verifyPredictionAndTarget(Value prediction, Value target,
                                               const ShapeError &error) {
  if (failed(verifySameElementTypes({prediction, target},
                                    {"prediction", "target"}, error)))
    return failure();
  return error.check(
      shape::verifyPredictionAndTarget(shapeOf(prediction), shapeOf(target)));
}

static LogicalResult inferTypes(MseLossOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyPredictionAndTarget(adaptor.getPrediction(),
                                       adaptor.getTarget(), error)))
    return failure();
  if (!elementTypeOf(adaptor.getPrediction()).isF32())
    return error("expects an f32 prediction, got ",
                 elementTypeOf(adaptor.getPrediction()));
  inferred.push_back(tensorOf({}, elementTypeOf(adaptor.getPrediction())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MseLossOp)

static LogicalResult inferTypes(MseLossGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyPredictionAndTarget(adaptor.getPrediction(),
                                       adaptor.getTarget(), error)))
    return failure();
  inferred.push_back(adaptor.getPrediction().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MseLossGradOp)

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

static LogicalResult inferTypes(ReluGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getDy(), adaptor.getY()},
                                    {"dy", "y"}, error)))
    return failure();
  shape::Dims dx;
  if (failed(error.check(shape::inferReluGradShape(
          shapeOf(adaptor.getDy()), shapeOf(adaptor.getY()), dx))))
    return failure();
  inferred.push_back(tensorOf(dx, elementTypeOf(adaptor.getY())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ReluGradOp)

static LogicalResult inferTypes(DropoutGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  float ratio = adaptor.getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return error("expects ratio in [0, 1), got ", ratio);
  if (adaptor.getSeed() == 0)
    return error("expects the non-zero seed of its dropout (the mask is "
                 "recomputed from it)");
  inferred.push_back(adaptor.getDy().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DropoutGradOp)

/// Conv parameters of a backprop op; padding is always explicit.
template <typename Adaptor>
static Conv2DParams getBackpropConvParams(Adaptor adaptor) {
  Conv2DParams params;
  params.window.strides = toDims(getI64ArrayOr(
      adaptor.getStridesAttr(), ::gopt::shape::absentWindowAttr("strides")));
  params.window.dilations =
      toDims(getI64ArrayOr(adaptor.getDilationsAttr(),
                           ::gopt::shape::absentWindowAttr("dilations")));
  params.window.padding = "EXPLICIT";
  params.window.pads = toDims(getI64ArrayOr(
      adaptor.getPadsAttr(), ::gopt::shape::absentWindowAttr("pads")));
  params.groups = static_cast<int64_t>(adaptor.getGroups());
  params.dataFormat = adaptor.getDataFormat();
  params.filterFormat = adaptor.getFilterFormat();
  return params;
}

static LogicalResult inferTypes(Conv2DBackpropInputOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getDy(), adaptor.getFilter()},
                                    {"dy", "filter"}, error)))
    return failure();
  shape::Dims dx;
  if (failed(error.check(shape::inferConv2DBackpropInputShape(
          shapeOf(adaptor.getDy()), shapeOf(adaptor.getFilter()),
          adaptor.getInputShape(), getBackpropConvParams(adaptor), dx))))
    return failure();
  inferred.push_back(tensorOf(dx, elementTypeOf(adaptor.getDy())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv2DBackpropInputOp)

static LogicalResult inferTypes(Conv2DBackpropFilterOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getInput(), adaptor.getDy()},
                                    {"input", "dy"}, error)))
    return failure();
  shape::Dims filter;
  if (failed(error.check(shape::inferConv2DBackpropFilterShape(
          shapeOf(adaptor.getInput()), shapeOf(adaptor.getDy()),
          adaptor.getFilterShape(), getBackpropConvParams(adaptor), filter))))
    return failure();
  inferred.push_back(tensorOf(filter, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv2DBackpropFilterOp)

/// max_pool_grad and avg_pool_grad: dx has x's type, and dy must have the
/// shape the forward pool with `params` gives x.
static LogicalResult inferPoolGradTypes(Value x, Value dy,
                                        const WindowParams &params,
                                        StringRef dataFormat,
                                        const ShapeError &error,
                                        SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({x, dy}, {"x", "dy"}, error)))
    return failure();
  shape::Dims dx;
  if (failed(error.check(shape::inferPoolGradShape(shapeOf(x), shapeOf(dy),
                                                   params, dataFormat, dx))))
    return failure();
  inferred.push_back(x.getType());
  return success();
}

static LogicalResult inferTypes(MaxPoolGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  WindowParams params;
  params.kernel = toDims(getI64ArrayOr(adaptor.getKernelAttr(), {}));
  params.strides = toDims(getI64ArrayOr(
      adaptor.getStridesAttr(), ::gopt::shape::absentWindowAttr("strides")));
  params.dilations = {1, 1};
  params.padding = "EXPLICIT";
  params.pads = toDims(getI64ArrayOr(adaptor.getPadsAttr(),
                                     ::gopt::shape::absentWindowAttr("pads")));
  return inferPoolGradTypes(adaptor.getX(), adaptor.getDy(), params,
                            adaptor.getDataFormat(), error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxPoolGradOp)

namespace {
SmallVector<int64_t, 2> stridesOf(MaxPoolGradOp op) {
  return getI64ArrayOr(op.getStridesAttr(),
                       ::gopt::shape::absentWindowAttr("strides"));
}
SmallVector<int64_t, 4> padsOf(MaxPoolGradOp op) {
  return getI64ArrayOr(op.getPadsAttr(),
                       ::gopt::shape::absentWindowAttr("pads"));
}

/// A max_pool of `x` whose windows are `grad`'s (explicit pads only: SAME
/// or ceil_mode resolve into pads that are not compared here) and that
/// comes before `user` in its block, or null.
MaxPoolOp findForwardPool(Value x, MaxPoolGradOp grad, Operation *user) {
  for (Operation *op : x.getUsers()) {
    auto pool = dyn_cast<MaxPoolOp>(op);
    if (!pool || pool.getX() != x || pool.getPadding() != "EXPLICIT" ||
        pool.getCeilMode() || pool->getBlock() != user->getBlock() ||
        !pool->isBeforeInBlock(user))
      continue;
    if (pool.getKernel() == grad.getKernel() &&
        ArrayRef<int64_t>(pool.getStridesOrDefault()) ==
            ArrayRef<int64_t>(stridesOf(grad)) &&
        ArrayRef<int64_t>(pool.getPadsOrDefault()) ==
            ArrayRef<int64_t>(padsOf(grad)) &&
        pool.getDataFormat() == grad.getDataFormat() &&
        pool.getY().getType() == grad.getDy().getType())
      return pool;
  }
  return nullptr;
}

/// relu_grad(max_pool_grad(y, g), y) -> max_pool_grad(y, relu_grad(g, p))
/// with p = max_pool(y) in the graph: max_pool_grad only writes where a
/// window's maximum is, and y there is that window's p, so masking by
/// y > 0 after the scatter equals masking g by p > 0 before it (a NaN
/// maximum fails both). The mask then reads the pooled tensor, a quarter
/// of y for 2x2 windows, and the relu before a max pool costs no pass
/// over the full-size gradient.
struct ReluGradThroughMaxPoolGrad : OpRewritePattern<ReluGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReluGradOp op,
                                PatternRewriter &rewriter) const override {
    auto grad = op.getDy().getDefiningOp<MaxPoolGradOp>();
    if (!grad || grad.getX() != op.getY() || !grad->hasOneUse())
      return rewriter.notifyMatchFailure(op, "dy is not max_pool_grad of y");
    MaxPoolOp pool = findForwardPool(op.getY(), grad, op);
    if (!pool)
      return rewriter.notifyMatchFailure(op, "no matching forward max_pool");
    Value masked =
        rewriter.create<ReluGradOp>(op.getLoc(), grad.getDy(), pool.getY());
    rewriter.replaceOpWithNewOp<MaxPoolGradOp>(
        op, op.getType(), grad.getX(), masked, grad.getKernelAttr(),
        grad.getStridesAttr(), grad.getPadsAttr(), grad.getDataFormatAttr());
    return success();
  }
};

/// reduce_sum over every axis but the channels of max_pool_grad(x, g) ->
/// the same reduce_sum of g: each window's gradient lands on exactly one
/// element of its window (windows with a real element only, which the
/// check below ensures), so the per-channel sums are equal (in another
/// order). A conv bias's gradient behind a max pool then reads the pooled
/// gradient instead of the full-size one.
struct BiasGradThroughMaxPoolGrad : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp op,
                                PatternRewriter &rewriter) const override {
    auto grad = op.getX().getDefiningOp<MaxPoolGradOp>();
    if (!grad)
      return rewriter.notifyMatchFailure(op, "operand is not max_pool_grad");
    auto xType = dyn_cast<RankedTensorType>(grad.getX().getType());
    auto dyType = dyn_cast<RankedTensorType>(grad.getDy().getType());
    if (!xType || !dyType || xType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "unranked or not 4-D");
    int64_t channel = getChannelAxis(grad.getDataFormat(), 4);
    SmallVector<int64_t, 3> axes;
    for (int64_t a : op.getAxes())
      axes.push_back(a < 0 ? a + 4 : a);
    llvm::sort(axes);
    SmallVector<int64_t, 3> expected;
    for (int64_t a = 0; a < 4; ++a)
      if (a != channel)
        expected.push_back(a);
    if (ArrayRef<int64_t>(axes) != ArrayRef<int64_t>(expected))
      return rewriter.notifyMatchFailure(op, "not a per-channel sum");
    // Every window must hold an input element: its first row/column
    // (out * stride - pad_begin) within the input, its last one not
    // before it.
    SmallVector<int64_t, 2> strides = stridesOf(grad);
    SmallVector<int64_t, 4> pads = padsOf(grad);
    ArrayRef<int64_t> kernel = grad.getKernel();
    int64_t spatial[2] = {channel == 1 ? 2 : 1, channel == 1 ? 3 : 2};
    for (int i = 0; i < 2; ++i) {
      int64_t in = xType.getDimSize(spatial[i]);
      int64_t out = dyType.getDimSize(spatial[i]);
      if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out) ||
          pads[2 * i] >= kernel[i] ||
          (out - 1) * strides[i] - pads[2 * i] >= in)
        return rewriter.notifyMatchFailure(op, "a window may be all padding");
    }
    rewriter.replaceOpWithNewOp<ReduceSumOp>(
        op, op.getType(), grad.getDy(), op.getAxesAttr(), op.getKeepDimsAttr());
    return success();
  }
};
} // namespace

void MaxPoolGradOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                MLIRContext *context) {
  results.add<ReluGradThroughMaxPoolGrad, BiasGradThroughMaxPoolGrad>(context);
}

static LogicalResult inferTypes(AvgPoolGradOp::Adaptor adaptor,
                                const ShapeError &error,
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
  return inferPoolGradTypes(adaptor.getX(), adaptor.getDy(), params,
                            adaptor.getDataFormat(), error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(AvgPoolGradOp)

static LogicalResult inferTypes(BatchNormGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes(
          {adaptor.getDy(), adaptor.getX(), adaptor.getScale(),
           adaptor.getBatchMean(), adaptor.getBatchVariance()},
          {"dy", "x", "scale", "batch_mean", "batch_variance"}, error)))
    return failure();
  const shape::DimsRef perChannel[3] = {shapeOf(adaptor.getScale()),
                                        shapeOf(adaptor.getBatchMean()),
                                        shapeOf(adaptor.getBatchVariance())};
  shape::Dims dx;
  int64_t channels;
  if (failed(error.check(shape::inferBatchNormGradShape(
          shapeOf(adaptor.getDy()), shapeOf(adaptor.getX()), perChannel,
          adaptor.getDataFormat(), adaptor.getEpsilon().convertToFloat(), dx,
          channels))))
    return failure();
  Type element = elementTypeOf(adaptor.getX());
  inferred.push_back(tensorOf(dx, element));
  inferred.append(2, tensorOf({channels}, element));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(BatchNormGradOp)

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// Every state operand of an update has the parameter's element type and
/// shape.
static LogicalResult verifyLikeParam(Value param, ArrayRef<Value> others,
                                     ArrayRef<StringRef> names,
                                     const ShapeError &error) {
  std::vector<std::pair<shape::DimsRef, const char *>> shapes;
  for (auto [value, name] : llvm::zip(others, names)) {
    if (elementTypeOf(value) != elementTypeOf(param))
      return error("expects ", name, " of the parameter's element type ",
                   elementTypeOf(param), ", got ", elementTypeOf(value));
    shapes.emplace_back(shapeOf(value), name.data());
  }
  return error.check(shape::verifyUpdateOperands(shapeOf(param), shapes));
}

static LogicalResult inferTypes(SgdUpdateOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyLikeParam(adaptor.getParam(),
                             {adaptor.getGrad(), adaptor.getVelocity()},
                             {"grad", "velocity"}, error)) ||
      failed(error.check(shape::verifySgdUpdateAttrs(
          adaptor.getLr().convertToFloat(),
          adaptor.getMomentum().convertToFloat(),
          adaptor.getWeightDecay().convertToFloat()))))
    return failure();
  inferred.append(2, adaptor.getParam().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(SgdUpdateOp)

static LogicalResult inferTypes(AdamUpdateOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(
          verifyLikeParam(adaptor.getParam(),
                          {adaptor.getGrad(), adaptor.getM(), adaptor.getV()},
                          {"grad", "m", "v"}, error)) ||
      failed(error.check(shape::verifyAdamUpdateAttrs(
          adaptor.getLr().convertToFloat(), adaptor.getBeta1().convertToFloat(),
          adaptor.getBeta2().convertToFloat(),
          adaptor.getEpsilon().convertToFloat(),
          adaptor.getWeightDecay().convertToFloat()))))
    return failure();
  inferred.append(3, adaptor.getParam().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(AdamUpdateOp)

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

static RankedTensorType scalarOf(Type element) {
  return RankedTensorType::get({}, element);
}

static LogicalResult inferTypes(AllFiniteOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return error("expects at least one operand");
  inferred.push_back(
      scalarOf(IntegerType::get(adaptor.getInputs()[0].getContext(), 1)));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(AllFiniteOp)

static LogicalResult inferTypes(SelectOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  Type onTrue = adaptor.getOnTrue().getType();
  if (onTrue != adaptor.getOnFalse().getType())
    return error("expects on_true and on_false of one type, got ", onTrue,
                 " and ", adaptor.getOnFalse().getType());
  inferred.push_back(onTrue);
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(SelectOp)

static LogicalResult inferTypes(LossScaleUpdateOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(error.check(shape::verifyLossScaleUpdateAttrs(
          adaptor.getGrowthInterval(),
          adaptor.getGrowthFactor().convertToFloat(),
          adaptor.getBackoffFactor().convertToFloat()))))
    return failure();
  inferred.append(2, adaptor.getScale().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LossScaleUpdateOp)
