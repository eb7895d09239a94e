//===- GoptNormOps.td - Normalization ops ------------------*- tablegen -*-===//
//
// Normalizations other than batch norm: over the trailing dimensions
// (layer_norm), over each sample's channel planes (instance_norm), and
// across neighbouring channels (lrn). Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTNORMOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTNORMOPS_TD

def Gopt_LayerNormOp : Gopt_InferredOp<"layer_norm", [Pure, SameOperandsAndResultElementType, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [1, 2];
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    ONNX's `LayerNormalization` (opset 17) and PyTorch's `nn.LayerNorm`:
    each slice `x[i0, ..., i(axis-1), :, ..., :]` is normalized with its own
    mean and (biased) variance,
    `y = (x - mean) / sqrt(variance + epsilon) * scale + bias`.
    `scale` and `bias` broadcast to the normalized dimensions
    `x.shape[axis:]` (numpy rules, aligned from the last dimension).
    Statistics are computed in f32 whatever the element type.

    ```mlir
    %y = gopt.layer_norm %x, %gamma, %beta {axis = -1 : i64, epsilon = 1.0e-05 : f32}
        : (tensor<?x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x128x768xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$scale,
                   Gopt_FloatTensor:$bias,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1e-05f">:$epsilon);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "layerNormShape";
  // Exporters before opset 17 write layer norm as reductions and
  // elementwise ops; canonicalization recognizes them (GoptNormOps.cpp).
  let hasCanonicalizer = 1;
}

def Gopt_InstanceNormOp : Gopt_InferredOp<"instance_norm", [Pure, SameOperandsAndResultElementType, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [1, 2];
  let summary = "instance normalization: each sample's channels on their own";
  let description = [{
    ONNX's `InstanceNormalization`: for every sample `n` and channel `c`,
    the spatial values `x[n, c, ...]` are normalized with their own mean and
    (biased) variance, then scaled and shifted per channel:
    `y = (x - mean) / sqrt(variance + epsilon) * scale[c] + bias[c]`.
    `data_format` picks the channel axis of a rank-4 input (1 for NCHW, 3 for
    NHWC); other ranks (3, 5, ...) have channels at axis 1. PyTorch exports
    `nn.GroupNorm` through this op.

    ```mlir
    %y = gopt.instance_norm %x, %scale, %bias {data_format = "NCHW", epsilon = 1.0e-05 : f32}
        : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$scale,
                   Gopt_FloatTensor:$bias,
                   DefaultValuedAttr<F32Attr, "1e-05f">:$epsilon,
                   Gopt_DataFormatAttr:$data_format);
  let results = (outs Gopt_FloatTensor:$y);
  let layoutActivationOperands = [0];
  let runtimeShapeFunction = "instanceNormShape";
}

def Gopt_LrnOp : Gopt_InferredOp<"lrn", [Pure, SameOperandsAndResultElementType, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "local response normalization across channels";
  let description = [{
    ONNX's `LRN` (AlexNet, GoogLeNet): each value is divided by a power of
    the sum of squares over `size` neighbouring channels,
    `y = x / (bias + alpha / size * sum(x[c']^2))^beta` with `c'` from
    `c - floor((size - 1) / 2)` to `c + ceil((size - 1) / 2)`, clipped to
    the channels there are. `data_format` picks the channel axis of a rank-4
    input; other ranks have channels at axis 1.

    ```mlir
    %y = gopt.lrn %x {size = 5 : i64, alpha = 1.0e-04 : f32, beta = 7.5e-01 : f32, bias = 1.0 : f32, data_format = "NCHW"}
        : (tensor<?x96x55x55xf32>) -> tensor<?x96x55x55xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, I64Attr:$size,
                   DefaultValuedAttr<F32Attr, "0.0001f">:$alpha,
                   DefaultValuedAttr<F32Attr, "0.75f">:$beta,
                   DefaultValuedAttr<F32Attr, "1.0f">:$bias,
                   Gopt_DataFormatAttr:$data_format);
  let results = (outs Gopt_FloatTensor:$y);
  let layoutActivationOperands = [0];
  let runtimeShapeFunction = "lrnShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTNORMOPS_TD
