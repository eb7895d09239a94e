//===- TrainingShapes.cpp - Shape functions of the training ops -----------===//
//
// Losses, gradients, optimizer updates and loss scaling
// (GoptTrainingOps.td). Dynamic dimensions match anything; the runtime calls
// these with static shapes, where "compatible" means equal.
//
//===----------------------------------------------------------------------===//

#include "gopt/Shape/TrainingShapes.h"
#include "Failure.h"

namespace gopt::shape {

using detail::fail;

namespace {

bool compatible(DimsRef a, DimsRef b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!isDynamic(a[i]) && !isDynamic(b[i]) && a[i] != b[i])
      return false;
  return true;
}

std::string dimText(int64_t dim) {
  return isDynamic(dim) ? "?" : std::to_string(dim);
}

/// The more static of two compatible shapes.
Dims refine(DimsRef a, DimsRef b) {
  Dims shape(a.begin(), a.end());
  for (size_t i = 0; i < shape.size(); ++i)
    if (isDynamic(shape[i]))
      shape[i] = b[i];
  return shape;
}

Result requireCompatible(DimsRef actual, DimsRef expected,
                         std::string_view what) {
  if (compatible(actual, expected))
    return Result::success();
  return fail("expects ", what, " of shape ", formatShape(expected), ", got ",
              formatShape(actual));
}

/// A rank-4 shape attribute; -1 may stand for the batch where
/// `batchMayBeDynamic` (it is taken from another operand).
Result verifyShapeAttr(DimsRef shape, std::string_view name,
                       bool batchMayBeDynamic) {
  if (shape.size() != 4)
    return fail("expects ", name, " of 4 entries, got ", shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] <= 0 && !(i == 0 && batchMayBeDynamic && shape[i] == -1))
      return fail("expects ", name, " entries > 0",
                  batchMayBeDynamic ? " (the batch may be -1)" : "", ", got ",
                  formatList(shape));
  return Result::success();
}

Result requireRate(float value, std::string_view name, bool below1) {
  if (!(value >= 0.0f) || (below1 && !(value < 1.0f)))
    return fail("expects ", name, below1 ? " in [0, 1)" : " >= 0", ", got ",
                value);
  return Result::success();
}

} // namespace

Result verifyLogitsAndLabels(DimsRef logits, DimsRef labels) {
  if (logits.size() != 2)
    return fail("expects logits of rank 2 ([batch, classes]), got rank ",
                logits.size());
  if (labels.size() != 1)
    return fail("expects labels of rank 1 ([batch]), got rank ", labels.size());
  if (!compatible(logits.take_front(1), labels))
    return fail("expects one label per row of logits (", dimText(logits[0]),
                " rows), got ", dimText(labels[0]), " labels");
  return Result::success();
}

Result verifyPredictionAndTarget(DimsRef prediction, DimsRef target) {
  if (!compatible(prediction, target))
    return fail("expects target of the prediction's shape ",
                formatShape(prediction), ", got ", formatShape(target));
  return Result::success();
}

Result inferReluGradShape(DimsRef dy, DimsRef y, Dims &result) {
  if (!compatible(dy, y))
    return fail("expects dy of y's shape ", formatShape(y), ", got ",
                formatShape(dy));
  result = refine(y, dy);
  return Result::success();
}

Result inferConv2DBackpropInputShape(DimsRef dy, DimsRef filter,
                                     DimsRef inputShape,
                                     const Conv2DParams &params, Dims &result) {
  if (dy.size() != 4)
    return fail("expects dy of rank 4, got rank ", dy.size());
  if (Result r = verifyShapeAttr(inputShape, "input_shape",
                                 /*batchMayBeDynamic=*/true);
      r.failed())
    return r;
  Dims input(inputShape.begin(), inputShape.end());
  input[0] = dy[0];
  // The forward conv of an input of this shape must produce dy's shape.
  Dims forward;
  if (Result r = inferConv2DShape(input, filter, nullptr, params, forward);
      r.failed())
    return r;
  if (Result r = requireCompatible(dy, forward, "dy (the conv's output)");
      r.failed())
    return r;
  result = std::move(input);
  return Result::success();
}

Result inferConv2DBackpropFilterShape(DimsRef input, DimsRef dy,
                                      DimsRef filterShape,
                                      const Conv2DParams &params,
                                      Dims &result) {
  if (Result r = verifyShapeAttr(filterShape, "filter_shape",
                                 /*batchMayBeDynamic=*/false);
      r.failed())
    return r;
  Dims forward;
  if (Result r = inferConv2DShape(input, filterShape, nullptr, params, forward);
      r.failed())
    return r;
  if (Result r = requireCompatible(dy, forward, "dy (the conv's output)");
      r.failed())
    return r;
  result.assign(filterShape.begin(), filterShape.end());
  return Result::success();
}

Result inferPoolGradShape(DimsRef x, DimsRef dy, const WindowParams &params,
                          std::string_view dataFormat, Dims &result) {
  Dims forward;
  if (Result r = inferPoolShape(x, params, dataFormat, forward); r.failed())
    return r;
  if (Result r = requireCompatible(dy, forward, "dy (the pool's output)");
      r.failed())
    return r;
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferBatchNormGradShape(DimsRef dy, DimsRef x,
                               const DimsRef (&perChannel)[3],
                               std::string_view dataFormat, float epsilon,
                               Dims &dx, int64_t &channels) {
  if (Result r = inferChannelCount(x, dataFormat, channels); r.failed())
    return r;
  if (!compatible(dy, x))
    return fail("expects dy of x's shape ", formatShape(x), ", got ",
                formatShape(dy));
  static const char *const names[] = {"scale", "batch_mean", "batch_variance"};
  for (int i = 0; i < 3; ++i)
    if (Result r = verifyChannelOperand(perChannel[i], channels, names[i]);
        r.failed())
      return r;
  if (!(epsilon >= 0.0f))
    return fail("expects epsilon >= 0, got ", epsilon);
  dx = refine(x, dy);
  return Result::success();
}

Result verifyUpdateOperands(
    DimsRef param,
    const std::vector<std::pair<DimsRef, const char *>> &others) {
  for (const auto &[shape, name] : others)
    if (!compatible(shape, param))
      return fail("expects ", name, " of the parameter's shape ",
                  formatShape(param), ", got ", formatShape(shape));
  return Result::success();
}

Result verifySgdUpdateAttrs(float lr, float momentum, float weightDecay) {
  if (Result r = requireRate(lr, "lr", false); r.failed())
    return r;
  if (Result r = requireRate(momentum, "momentum", false); r.failed())
    return r;
  return requireRate(weightDecay, "weight_decay", false);
}

Result verifyAdamUpdateAttrs(float lr, float beta1, float beta2, float epsilon,
                             float weightDecay) {
  if (Result r = requireRate(lr, "lr", false); r.failed())
    return r;
  if (Result r = requireRate(beta1, "beta1", true); r.failed())
    return r;
  if (Result r = requireRate(beta2, "beta2", true); r.failed())
    return r;
  if (Result r = requireRate(weightDecay, "weight_decay", false); r.failed())
    return r;
  if (!(epsilon > 0.0f))
    return fail("expects epsilon > 0, got ", epsilon);
  return Result::success();
}

Result verifyScalarOperand(DimsRef shape, std::string_view name) {
  if (shape.empty() || (shape.size() == 1 && shape[0] == 1))
    return Result::success();
  return fail("expects ", name,
              " to be a scalar [] ([1] is accepted too), got ",
              formatShape(shape));
}

Result verifyLossScaleUpdateAttrs(int64_t growthInterval, float growthFactor,
                                  float backoffFactor) {
  if (growthInterval < 1)
    return fail("expects growth_interval >= 1, got ", growthInterval);
  if (!(growthFactor > 1.0f))
    return fail("expects growth_factor > 1, got ", growthFactor);
  if (!(backoffFactor > 0.0f && backoffFactor < 1.0f))
    return fail("expects backoff_factor in (0, 1), got ", backoffFactor);
  return Result::success();
}

} // namespace gopt::shape
