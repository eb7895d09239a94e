//===- GoptTrainingOps.cpp - shape functions of the training ops ----------===//
//
// Losses, gradients and optimizer updates (GoptTrainingOps.td). Gradient ops
// check their operands against the forward op's shape function, so a
// gradient whose shapes could not come from the forward op is rejected.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

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

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

/// `actual` must be compatible with `expected` (dynamic dims match anything).
static LogicalResult verifyCompatible(ArrayRef<int64_t> actual,
                                      ArrayRef<int64_t> expected,
                                      StringRef what, const ShapeError &error) {
  if (succeeded(verifyCompatibleShape(actual, expected)))
    return success();
  return error("expects ", what, " of shape ", shapeString(expected), ", got ",
               shapeString(actual));
}

/// The more static of two compatible shapes.
static Shape refineShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  Shape shape(a.begin(), a.end());
  for (auto [i, d] : llvm::enumerate(b))
    if (ShapedType::isDynamic(shape[i]))
      shape[i] = d;
  return shape;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

static LogicalResult verifyLogitsAndLabels(Value logits, Value labels,
                                           const ShapeError &error) {
  ArrayRef<int64_t> l = shapeOf(logits), y = shapeOf(labels);
  if (l.size() != 2)
    return error("expects logits of rank 2 ([batch, classes]), got rank ",
                 l.size());
  if (y.size() != 1)
    return error("expects labels of rank 1 ([batch]), got rank ", y.size());
  if (failed(verifyCompatibleShape(l.take_front(), y)))
    return error("expects one label per row of logits (", l[0], " rows), got ",
                 y[0], " labels");
  return success();
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
  ArrayRef<int64_t> p = shapeOf(prediction), t = shapeOf(target);
  if (p.size() != t.size() || failed(verifyCompatibleShape(p, t)))
    return error("expects target of the prediction's shape ", shapeString(p),
                 ", got ", shapeString(t));
  return success();
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
  ArrayRef<int64_t> dy = shapeOf(adaptor.getDy()), y = shapeOf(adaptor.getY());
  if (dy.size() != y.size() || failed(verifyCompatibleShape(dy, y)))
    return error("expects dy of y's shape ", shapeString(y), ", got ",
                 shapeString(dy));
  inferred.push_back(
      tensorOf(refineShape(y, dy), elementTypeOf(adaptor.getY())));
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

/// A shape attribute of a backprop op: rank 4, positive sizes except where
/// `dynamicAllowed` lets -1 stand for a size taken from elsewhere.
static LogicalResult verifyShapeAttr(ArrayRef<int64_t> shape, StringRef name,
                                     bool batchMayBeDynamic,
                                     const ShapeError &error) {
  if (shape.size() != 4)
    return error("expects ", name, " of 4 entries, got ", shape.size());
  for (auto [i, d] : llvm::enumerate(shape))
    if (d <= 0 && !(i == 0 && batchMayBeDynamic && d == -1))
      return error("expects ", name, " entries > 0",
                   batchMayBeDynamic ? " (the batch may be -1)" : "", ", got ",
                   shapeString(shape));
  return success();
}

static LogicalResult inferTypes(Conv2DBackpropInputOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getDy(), adaptor.getFilter()},
                                    {"dy", "filter"}, error)))
    return failure();
  ArrayRef<int64_t> dy = shapeOf(adaptor.getDy());
  if (dy.size() != 4)
    return error("expects dy of rank 4, got rank ", dy.size());
  if (failed(verifyShapeAttr(adaptor.getInputShape(), "input_shape",
                             /*batchMayBeDynamic=*/true, error)))
    return failure();
  Shape input(adaptor.getInputShape().begin(), adaptor.getInputShape().end());
  input[0] = dy[0];
  // The forward conv of an input of this shape must produce dy's shape.
  Shape forward;
  if (failed(inferConv2DShape(input, shapeOf(adaptor.getFilter()), std::nullopt,
                              getBackpropConvParams(adaptor), forward, error)))
    return failure();
  if (failed(verifyCompatible(dy, forward, "dy (the conv's output)", error)))
    return failure();
  inferred.push_back(tensorOf(input, elementTypeOf(adaptor.getDy())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv2DBackpropInputOp)

static LogicalResult inferTypes(Conv2DBackpropFilterOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getInput(), adaptor.getDy()},
                                    {"input", "dy"}, error)))
    return failure();
  if (failed(verifyShapeAttr(adaptor.getFilterShape(), "filter_shape",
                             /*batchMayBeDynamic=*/false, error)))
    return failure();
  Shape forward;
  if (failed(inferConv2DShape(shapeOf(adaptor.getInput()),
                              adaptor.getFilterShape(), std::nullopt,
                              getBackpropConvParams(adaptor), forward, error)))
    return failure();
  if (failed(verifyCompatible(shapeOf(adaptor.getDy()), forward,
                              "dy (the conv's output)", error)))
    return failure();
  inferred.push_back(
      tensorOf(adaptor.getFilterShape(), elementTypeOf(adaptor.getInput())));
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
  Shape forward;
  if (failed(inferPoolShape(shapeOf(x), params, dataFormat, forward, error)))
    return failure();
  if (failed(verifyCompatible(shapeOf(dy), forward, "dy (the pool's output)",
                              error)))
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
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  if (x.size() < 2)
    return error("expects an input of rank >= 2, got rank ", x.size());
  if (x.size() == 4 && failed(parseDataFormat(adaptor.getDataFormat(), error)))
    return failure();
  if (failed(verifySameElementTypes(
          {adaptor.getDy(), adaptor.getX(), adaptor.getScale(),
           adaptor.getBatchMean(), adaptor.getBatchVariance()},
          {"dy", "x", "scale", "batch_mean", "batch_variance"}, error)))
    return failure();
  ArrayRef<int64_t> dy = shapeOf(adaptor.getDy());
  if (dy.size() != x.size() || failed(verifyCompatibleShape(dy, x)))
    return error("expects dy of x's shape ", shapeString(x), ", got ",
                 shapeString(dy));
  int64_t channels = x[getChannelAxis(adaptor.getDataFormat(), x.size())];
  Value perChannel[] = {adaptor.getScale(), adaptor.getBatchMean(),
                        adaptor.getBatchVariance()};
  StringRef names[] = {"scale", "batch_mean", "batch_variance"};
  for (auto [value, name] : llvm::zip(perChannel, names))
    if (failed(verifyChannelOperand(shapeOf(value), channels, name, error)))
      return failure();
  if (!(adaptor.getEpsilon().convertToFloat() >= 0.0f))
    return error("expects epsilon >= 0, got ",
                 adaptor.getEpsilon().convertToFloat());
  Type element = elementTypeOf(adaptor.getX());
  inferred.push_back(tensorOf(refineShape(x, dy), element));
  inferred.append(2, tensorOf({channels}, element));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(BatchNormGradOp)

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// Every state operand of an update has the parameter's exact type.
static LogicalResult verifyLikeParam(Value param, ArrayRef<Value> others,
                                     ArrayRef<StringRef> names,
                                     const ShapeError &error) {
  for (auto [value, name] : llvm::zip(others, names))
    if (value.getType() != param.getType())
      return error("expects ", name, " of the parameter's type ",
                   param.getType(), ", got ", value.getType());
  return success();
}

static LogicalResult verifyRate(float value, StringRef name, bool below1,
                                const ShapeError &error) {
  if (!(value >= 0.0f) || (below1 && !(value < 1.0f)))
    return error("expects ", name, below1 ? " in [0, 1)" : " >= 0", ", got ",
                 value);
  return success();
}

static LogicalResult inferTypes(SgdUpdateOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyLikeParam(adaptor.getParam(),
                             {adaptor.getGrad(), adaptor.getVelocity()},
                             {"grad", "velocity"}, error)) ||
      failed(
          verifyRate(adaptor.getLr().convertToFloat(), "lr", false, error)) ||
      failed(verifyRate(adaptor.getMomentum().convertToFloat(), "momentum",
                        false, error)) ||
      failed(verifyRate(adaptor.getWeightDecay().convertToFloat(),
                        "weight_decay", false, error)))
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
      failed(
          verifyRate(adaptor.getLr().convertToFloat(), "lr", false, error)) ||
      failed(verifyRate(adaptor.getBeta1().convertToFloat(), "beta1", true,
                        error)) ||
      failed(verifyRate(adaptor.getBeta2().convertToFloat(), "beta2", true,
                        error)) ||
      failed(verifyRate(adaptor.getWeightDecay().convertToFloat(),
                        "weight_decay", false, error)))
    return failure();
  if (!(adaptor.getEpsilon().convertToFloat() > 0.0f))
    return error("expects epsilon > 0, got ",
                 adaptor.getEpsilon().convertToFloat());
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
  if (adaptor.getGrowthInterval() < 1)
    return error("expects growth_interval >= 1, got ",
                 adaptor.getGrowthInterval());
  float growth = adaptor.getGrowthFactor().convertToFloat();
  float backoff = adaptor.getBackoffFactor().convertToFloat();
  if (!(growth > 1.0f))
    return error("expects growth_factor > 1, got ", growth);
  if (!(backoff > 0.0f && backoff < 1.0f))
    return error("expects backoff_factor in (0, 1), got ", backoff);
  inferred.append(2, adaptor.getScale().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(LossScaleUpdateOp)
