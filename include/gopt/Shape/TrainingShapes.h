//===- TrainingShapes.h - Shape functions of the training ops ---*- C++ -*-===//
//
// Losses, gradient ops, optimizer updates and dynamic loss scaling
// (GoptTrainingOps.td; lib/Shape/TrainingShapes.cpp). Gradient ops check
// their operands against the forward op's shape function, so a gradient
// whose shapes could not come from the forward op is refused, by the
// verifier and by the runtime alike. Element types are each side's own
// (ODS type constraints; the plan's dtypes).
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_SHAPE_TRAININGSHAPES_H
#define GOPT_SHAPE_TRAININGSHAPES_H

#include "gopt/Shape/ShapeFunctions.h"

#include <string_view>
#include <utility>
#include <vector>

namespace gopt::shape {

/// softmax_cross_entropy(_grad): logits [batch, classes], labels [batch].
Result verifyLogitsAndLabels(DimsRef logits, DimsRef labels);

/// mse_loss(_grad): the target has the prediction's shape.
Result verifyPredictionAndTarget(DimsRef prediction, DimsRef target);

/// relu_grad: dy has y's shape; the result is the more static of the two.
Result inferReluGradShape(DimsRef dy, DimsRef y, Dims &result);

/// conv2d_backprop_input: `inputShape` is the forward input's shape (its
/// batch may be -1: taken from dy); the forward conv of that input and
/// `filter` must give dy. `params.window.padding` is EXPLICIT.
Result inferConv2DBackpropInputShape(DimsRef dy, DimsRef filter,
                                     DimsRef inputShape,
                                     const Conv2DParams &params, Dims &result);

/// conv2d_backprop_filter: the forward conv of `input` and a filter of
/// `filterShape` must give dy; the result is `filterShape`.
Result inferConv2DBackpropFilterShape(DimsRef input, DimsRef dy,
                                      DimsRef filterShape,
                                      const Conv2DParams &params, Dims &result);

/// max_pool_grad / avg_pool_grad: dy must be what the forward pool with
/// `params` gives x; dx has x's shape.
Result inferPoolGradShape(DimsRef x, DimsRef dy, const WindowParams &params,
                          std::string_view dataFormat, Dims &result);

/// batch_norm_grad: dy has x's shape; `perChannel` (scale, batch_mean,
/// batch_variance) one value per channel of x each; epsilon >= 0. dx has
/// x's shape, dscale and doffset `channels` values.
Result inferBatchNormGradShape(DimsRef dy, DimsRef x,
                               const DimsRef (&perChannel)[3],
                               std::string_view dataFormat, float epsilon,
                               Dims &dx, int64_t &channels);

/// sgd_update / adam_update: every state operand (grad, velocity, m, v;
/// named in `others`) has the parameter's shape.
Result verifyUpdateOperands(
    DimsRef param, const std::vector<std::pair<DimsRef, const char *>> &others);

/// sgd_update's hyperparameters: lr, momentum and weight_decay >= 0.
Result verifySgdUpdateAttrs(float lr, float momentum, float weightDecay);

/// adam_update's hyperparameters: lr and weight_decay >= 0, beta1 and beta2
/// in [0, 1), epsilon > 0.
Result verifyAdamUpdateAttrs(float lr, float beta1, float beta2, float epsilon,
                             float weightDecay);

/// A scalar operand (adam_update's step, the loss scale): [] or [1].
Result verifyScalarOperand(DimsRef shape, std::string_view name);

/// loss_scale_update's attributes: growth_interval >= 1, growth_factor > 1,
/// backoff_factor in (0, 1).
Result verifyLossScaleUpdateAttrs(int64_t growthInterval, float growthFactor,
                                  float backoffFactor);

} // namespace gopt::shape

#endif // GOPT_SHAPE_TRAININGSHAPES_H
