//===- GoptTrainingOps.td - losses, gradients, optimizers --*- tablegen -*-===//
//
// The ops a training step adds to a forward graph: `--gopt-add-loss` puts a
// loss on the logits, `--gopt-autodiff` writes the backward ops, and
// `--gopt-add-optimizer` the parameter updates. Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTTRAININGOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTTRAININGOPS_TD

def Gopt_LabelTensor : RankedTensorOf<[I32, I64]>;
def Gopt_F32Scalar : 0DTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Gopt_SoftmaxCrossEntropyOp : Gopt_InferredOp<"softmax_cross_entropy", [Pure, Gopt_Differentiable]> {
  let summary = "mean softmax cross-entropy of logits against integer labels";
  let description = [{
    `loss = mean_n(-log_softmax(logits[n])[labels[n]])` for `logits` `[N, C]`
    and `labels` `[N]` in `[0, C)` (the runtime reports a label outside that
    range with its row). PyTorch's `CrossEntropyLoss` and TensorFlow's
    `sparse_softmax_cross_entropy_with_logits` followed by a mean.

    ```mlir
    %loss = gopt.softmax_cross_entropy %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$logits, Gopt_LabelTensor:$labels);
  let results = (outs Gopt_F32Scalar:$loss);
  let runtimeShapeFunction = "crossEntropyShape";
}

def Gopt_SoftmaxCrossEntropyGradOp : Gopt_InferredOp<"softmax_cross_entropy_grad",
    [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of softmax_cross_entropy with respect to the logits";
  let description = [{
    `(softmax(logits) - one_hot(labels)) / N`: the gradient of the mean loss.

    ```mlir
    %d = gopt.softmax_cross_entropy_grad %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$logits, Gopt_LabelTensor:$labels);
  let results = (outs Gopt_FloatTensor:$dlogits);
  let runtimeShapeFunction = "crossEntropyGradShape";
}

def Gopt_MseLossOp : Gopt_InferredOp<"mse_loss", [Pure, Gopt_Differentiable]> {
  let summary = "mean squared error";
  let description = [{
    `loss = mean((prediction - target)^2)` over all elements; both operands
    have the same shape.

    ```mlir
    %loss = gopt.mse_loss %y, %target : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$prediction, Gopt_FloatTensor:$target);
  let results = (outs Gopt_F32Scalar:$loss);
  let runtimeShapeFunction = "mseLossShape";
}

def Gopt_MseLossGradOp : Gopt_InferredOp<"mse_loss_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of mse_loss with respect to the prediction";
  let description = [{
    `2 * (prediction - target) / numel(prediction)`.

    ```mlir
    %d = gopt.mse_loss_grad %y, %target : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$prediction, Gopt_FloatTensor:$target);
  let results = (outs Gopt_FloatTensor:$dprediction);
  let runtimeShapeFunction = "mseLossGradShape";
}

//===----------------------------------------------------------------------===//
// Gradients of forward ops
//===----------------------------------------------------------------------===//

def Gopt_ReluGradOp : Gopt_InferredOp<"relu_grad", [Pure, Gopt_LayoutAgnostic]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of relu, from its output";
  let description = [{
    `dx = y > 0 ? dy : 0`, where `y` is relu's output (not its input), so a
    relu fused into the producing conv2d still has the value it needs.

    ```mlir
    %dx = gopt.relu_grad %dy, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$dy, Gopt_FloatTensor:$y);
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "reluGradShape";
}

def Gopt_DropoutGradOp : Gopt_InferredOp<"dropout_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of training-mode dropout";
  let description = [{
    `dx = keep ? dy / (1 - ratio) : 0` with the mask of the `gopt.dropout`
    that has the same `ratio` and `seed`, recomputed in the same run.

    ```mlir
    %dx = gopt.dropout_grad %dy {ratio = 5.000000e-01 : f32, seed = 2 : i64} : (tensor<?x128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$dy, F32Attr:$ratio, I64Attr:$seed);
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "sameShape";
}

def Gopt_Conv2DBackpropInputOp : Gopt_InferredOp<"conv2d_backprop_input", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    The transposed convolution of `dy` with `filter` that gives the gradient
    of `gopt.conv2d` (same `strides`, `dilations`, explicit `pads`,
    `groups`, formats) with respect to its input. `input_shape` is the
    conv's input shape in `data_format` order; its batch entry may be -1
    (taken from `dy`).

    ```mlir
    %dx = gopt.conv2d_backprop_input %dy, %w {input_shape = array<i64: -1, 32, 26, 26>, data_format = "NCHW", filter_format = "OIHW"}
        : (tensor<?x64x24x24xf32>, tensor<64x32x3x3xf32>) -> tensor<?x32x26x26xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$dy, Gopt_FloatTensor:$filter,
                   DenseI64ArrayAttr:$input_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Gopt_DataFormatAttr:$data_format,
                   Gopt_FilterFormatAttr:$filter_format);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "conv2dBackpropInputShape";
  let flopFunction = "conv2dBackpropInputFlops";
}

def Gopt_Conv2DBackpropFilterOp : Gopt_InferredOp<"conv2d_backprop_filter", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of conv2d with respect to its filter";
  let description = [{
    Correlates the conv's `input` with `dy` to give the gradient of
    `gopt.conv2d` with respect to its filter, of shape `filter_shape` (in
    `filter_format` order). The bias gradient is a `reduce_sum` of `dy`.

    ```mlir
    %dw = gopt.conv2d_backprop_filter %x, %dy {filter_shape = array<i64: 64, 32, 3, 3>, data_format = "NCHW", filter_format = "OIHW"}
        : (tensor<?x32x26x26xf32>, tensor<?x64x24x24xf32>) -> tensor<64x32x3x3xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$filter_shape,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Gopt_DataFormatAttr:$data_format,
                   Gopt_FilterFormatAttr:$filter_format);
  let layoutActivationOperands = [0, 1];
  let layoutActivationResult = 0;
  let results = (outs Gopt_FloatTensor:$dfilter);
  let runtimeShapeFunction = "conv2dBackpropFilterShape";
  let flopFunction = "conv2dBackpropFilterFlops";
}

def Gopt_MaxPoolGradOp : Gopt_InferredOp<"max_pool_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of max_pool";
  let description = [{
    Routes each window's gradient to the first maximum of `x` in that window
    (row-major order; padded positions never win), summing where windows
    overlap. Pads are explicit (`--gopt-autodiff` resolves `SAME` and
    `ceil_mode` into them).

    ```mlir
    %dx = gopt.max_pool_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NCHW"}
        : (tensor<?x64x24x24xf32>, tensor<?x64x12x12xf32>) -> tensor<?x64x24x24xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$kernel,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   Gopt_DataFormatAttr:$data_format);
  let layoutActivationOperands = [0, 1];
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "maxPoolGradShape";
  // Rewrites of its readers (relu_grad, the bias gradient's reduce_sum)
  // that move their work onto the pooled, smaller gradient.
  let hasCanonicalizer = 1;
}

def Gopt_AvgPoolGradOp : Gopt_InferredOp<"avg_pool_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of avg_pool";
  let description = [{
    Spreads each window's gradient evenly over the elements `avg_pool`
    averaged, dividing by the same count (padding counted only with
    `count_include_pad`, never the extra area `ceil_mode` adds), summing
    where windows overlap. Takes the forward op's attributes unchanged; `x`
    gives only the result's shape.

    ```mlir
    %dx = gopt.avg_pool_grad %x, %dy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = "SAME", data_format = "NCHW"}
        : (tensor<?x64x24x24xf32>, tensor<?x64x12x12xf32>) -> tensor<?x64x24x24xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$kernel,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   Gopt_PaddingAttr:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let layoutActivationOperands = [0, 1];
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "avgPoolGradShape";
}

def Gopt_BatchNormGradOp : Gopt_InferredOp<"batch_norm_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of training-form batch_norm";
  let description = [{
    Gradients of `gopt.batch_norm` (`training = true`) with respect to `x`,
    `scale` and `offset`, from `dy` and the batch mean and (biased) variance
    the forward op returned. With `cross_replica` (the forward op's) the
    sums over the batch that `dx` needs are those of the global batch;
    `dscale` and `doffset` stay this replica's, which the data-parallel
    gradient all-reduce then averages as it does every gradient.

    ```mlir
    %dx, %dscale, %doffset = gopt.batch_norm_grad %dy, %x, %scale, %mean, %var {epsilon = 1.0e-05 : f32, data_format = "NCHW"}
        : (tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$dy, Gopt_FloatTensor:$x,
                   Gopt_FloatTensor:$scale, Gopt_FloatTensor:$batch_mean,
                   Gopt_FloatTensor:$batch_variance,
                   DefaultValuedAttr<F32Attr, "0.001f">:$epsilon,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$cross_replica);
  let layoutActivationOperands = [0, 1];
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dscale,
                      Gopt_FloatTensor:$doffset);
  let runtimeShapeFunction = "batchNormGradShape";
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Gopt_SgdUpdateOp : Gopt_InferredOp<"sgd_update", [Pure]> {
  let notDifferentiable = "an optimizer step, written after autodiff";
  let summary = "one SGD step with momentum and weight decay";
  let description = [{
    PyTorch's `torch.optim.SGD` (dampening 0):
    `g = grad + weight_decay * param; v = momentum * v + g;
    g = nesterov ? g + momentum * v : v; param = param - lr * g`.
    Returns the new parameter and velocity.

    ```mlir
    %p1, %v1 = gopt.sgd_update %p, %g, %v {lr = 0.1 : f32, momentum = 0.9 : f32}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$param, Gopt_FloatTensor:$grad,
                   Gopt_FloatTensor:$velocity, F32Attr:$lr,
                   DefaultValuedAttr<F32Attr, "0.0f">:$momentum,
                   DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Gopt_FloatTensor:$new_param,
                      Gopt_FloatTensor:$new_velocity);
  let runtimeShapeFunction = "sgdUpdateShape";
}

def Gopt_AdamUpdateOp : Gopt_InferredOp<"adam_update", [Pure]> {
  let notDifferentiable = "an optimizer step, written after autodiff";
  let summary = "one Adam step";
  let description = [{
    PyTorch's `torch.optim.Adam`, `step` being this update's number t >= 1:
    `g = grad + weight_decay * param; m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g^2;
    param = param - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)`.
    Returns the new parameter, m and v.

    ```mlir
    %p1, %m1, %v1 = gopt.adam_update %p, %g, %m, %v, %t {lr = 1.0e-03 : f32}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>)
        -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$param, Gopt_FloatTensor:$grad,
                   Gopt_FloatTensor:$m, Gopt_FloatTensor:$v,
                   Gopt_F32Scalar:$step, F32Attr:$lr,
                   DefaultValuedAttr<F32Attr, "0.9f">:$beta1,
                   DefaultValuedAttr<F32Attr, "0.999f">:$beta2,
                   DefaultValuedAttr<F32Attr, "1.0e-8f">:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay);
  let results = (outs Gopt_FloatTensor:$new_param, Gopt_FloatTensor:$new_m,
                      Gopt_FloatTensor:$new_v);
  let runtimeShapeFunction = "adamUpdateShape";
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling (mixed-precision training)
//===----------------------------------------------------------------------===//

def Gopt_BoolScalar : 0DTensorOf<[I1]>;

def Gopt_AllFiniteOp : Gopt_InferredOp<"all_finite", [Pure]> {
  let notDifferentiable = "a boolean result";
  let summary = "whether every element of every operand is finite";
  let description = [{
    True iff no element of any operand is inf or NaN: the check of a
    loss-scaled step's gradients (TensorFlow's `LossScaleOptimizer`,
    PyTorch's `GradScaler`), one op over all of them.

    ```mlir
    %ok = gopt.all_finite %g1, %g2 : (tensor<64xf32>, tensor<10x64xf32>) -> tensor<i1>
    ```
  }];
  let arguments = (ins Variadic<Gopt_FloatTensor>:$inputs);
  let results = (outs Gopt_BoolScalar:$finite);
  let runtimeShapeFunction = "allFiniteShape";
  let resultElementType = "i1";
}

def Gopt_SelectOp : Gopt_InferredOp<"select", [Pure]> {
  let notDifferentiable = "picks a loss-scaled step's results after autodiff (the elementwise where is differentiable)";
  let summary = "one of two whole tensors, chosen by a scalar predicate";
  let description = [{
    `pred ? on_true : on_false`, whole tensors of one type: how a
    loss-scaled step keeps its parameters and optimizer state when its
    gradients overflowed. (An elementwise `Where` is a different op.)

    ```mlir
    %p = gopt.select %ok, %updated, %param : (tensor<i1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Gopt_BoolScalar:$pred, Gopt_Tensor:$on_true,
                   Gopt_Tensor:$on_false);
  let results = (outs Gopt_Tensor:$result);
  let runtimeShapeFunction = "selectShape";
  let resultElementType = "operand:1";
}

def Gopt_LossScaleUpdateOp : Gopt_InferredOp<"loss_scale_update", [Pure]> {
  let notDifferentiable = "updates the loss scale after the step, outside the differentiated graph";
  let summary = "next dynamic loss scale (PyTorch's GradScaler.update)";
  let description = [{
    After a step whose gradients were not all finite, the scale is
    multiplied by `backoff_factor` and the count of good steps reset; after
    `growth_interval` good steps in a row it is multiplied by
    `growth_factor` (unless that overflows) and the count reset:

    ```
    if (!finite) { scale *= backoff_factor; good_steps = 0; }
    else if (++good_steps >= growth_interval) {
      if (isfinite(scale * growth_factor)) scale *= growth_factor;
      good_steps = 0;
    }
    ```

    ```mlir
    %s1, %n1 = gopt.loss_scale_update %s, %n, %ok {growth_interval = 2000 : i64}
        : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
    ```
  }];
  let arguments = (ins Gopt_F32Scalar:$scale, Gopt_F32Scalar:$good_steps,
                   Gopt_BoolScalar:$finite,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval,
                   DefaultValuedAttr<F32Attr, "2.0f">:$growth_factor,
                   DefaultValuedAttr<F32Attr, "0.5f">:$backoff_factor);
  let results = (outs Gopt_F32Scalar:$new_scale,
                      Gopt_F32Scalar:$new_good_steps);
  let runtimeShapeFunction = "lossScaleUpdateShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTTRAININGOPS_TD
