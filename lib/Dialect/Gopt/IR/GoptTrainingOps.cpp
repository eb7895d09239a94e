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
