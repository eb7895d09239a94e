//===- GoptImageOps.td - image ops: transposed conv, resize -*- tablegen -*-===//
//
// Ops that change an activation's spatial size upwards: the transposed
// convolution (ONNX ConvTranspose, TF Conv2DBackpropInput used as a layer)
// and resampling (ONNX Resize/Upsample, TF ResizeBilinear and
// ResizeNearestNeighbor). Both are layout-sensitive (`data_format`).
// Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTIMAGEOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTIMAGEOPS_TD

def Gopt_Conv2DTransposeOp : Gopt_InferredOp<"conv2d_transpose", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [1, 2];
  let summary = "2-D transposed convolution, optionally with bias";
  let description = [{
    The transposed ("fractionally strided") convolution of `input`
    (`data_format` NHWC or NCHW) with `filter`: every input pixel scatters
    `filter`-weighted copies of itself into the output, `strides` apart.
    `filter` is laid out as the filter of the forward `gopt.conv2d` whose
    input gradient this is: `filter_format` OIHW `[Cin, Cout/groups, KH, KW]`
    (ONNX ConvTranspose's weight) or HWIO `[KH, KW, Cout/groups, Cin]`
    (TensorFlow's Conv2DBackpropInput filter). Without bias and
    `output_padding` it computes what `gopt.conv2d_backprop_input` computes,
    but its output size follows from the input's, so H and W may be dynamic.

    Output size per spatial dim: `(in - 1) * stride + (k - 1) * dilation + 1
    - pad_begin - pad_end + output_padding`. `pads` (`[top, bottom, left,
    right]`) crop the full output; `output_padding` (`[h, w]`) adds rows and
    columns at the end that only the bias reaches beyond the full output.
    `bias` (`[Cout]`) is added to every output pixel.

    ```mlir
    %y = gopt.conv2d_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"}
        : (tensor<1x96x?x?xf32>, tensor<96x24x2x2xf32>, tensor<24xf32>) -> tensor<1x24x?x?xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$filter,
                   Optional<Gopt_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Gopt_DataFormatAttr:$data_format,
                   Gopt_FilterFormatAttr:$filter_format);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$output);
  let runtimeShapeFunction = "conv2dTransposeShape";
  let flopFunction = "conv2dTransposeFlops";
}

def Gopt_ResizeModeAttr : Gopt_StrEnumAttr<["nearest", "linear", "cubic"], "nearest">;
def Gopt_CoordinateTransformationModeAttr
    : Gopt_StrEnumAttr<["half_pixel", "pytorch_half_pixel", "align_corners",
                        "asymmetric", "tf_half_pixel_for_nn",
                        "tf_crop_and_resize", "half_pixel_symmetric"],
                       "half_pixel">;
def Gopt_NearestModeAttr
    : Gopt_StrEnumAttr<["round_prefer_floor", "round_prefer_ceil", "floor",
                        "ceil"], "round_prefer_floor">;

def Gopt_ResizeOp : Gopt_InferredOp<"resize", [Pure, Gopt_Differentiable]> {
  let summary = "resamples the spatial dims of an image (ONNX Resize)";
  let description = [{
    Resizes H and W of a rank-4 `input` (`data_format` NHWC or NCHW) to
    `sizes` (`[H, W]`) or `floor(in * scales)` (`scales` `[H, W]`); with
    both (ONNX's keep_aspect_ratio_policy), `sizes` is the output and
    `scales` the coordinate scale. Each output coordinate maps to an input
    coordinate by `coordinate_transformation_mode` (ONNX's: `half_pixel`,
    `half_pixel_symmetric`, `pytorch_half_pixel`, `align_corners`,
    `asymmetric`, `tf_half_pixel_for_nn`, `tf_crop_and_resize` with `roi`
    `[h_start, w_start, h_end, w_end]` in normalized coordinates), with
    scale `scales[i]` when given, else `out / in`. `mode` `nearest` picks
    one pixel by `nearest_mode`; `linear` interpolates 2x2 pixels, `cubic`
    4x4 with Keys' coefficient `cubic_coeff_a`; with `antialias`, linear and
    cubic downscaling stretch the filter by `1 / scale` (more taps, weights
    renormalized). Pixels outside the input repeat the edge, or with
    `exclude_outside` get weight 0 (the others renormalized).
    `tf_crop_and_resize` gives `extrapolation_value` where the coordinate
    leaves the input. docs/op-semantics.md has the formulas.

    ```mlir
    %y = gopt.resize %x {scales = array<f32: 2.0, 2.0>, mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", data_format = "NCHW"}
        : (tensor<1x24x?x?xf32>) -> tensor<1x24x?x?xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input,
                   OptionalAttr<DenseF32ArrayAttr>:$scales,
                   OptionalAttr<DenseI64ArrayAttr>:$sizes,
                   OptionalAttr<DenseF32ArrayAttr>:$roi,
                   Gopt_ResizeModeAttr:$mode,
                   Gopt_CoordinateTransformationModeAttr:$coordinate_transformation_mode,
                   Gopt_NearestModeAttr:$nearest_mode,
                   DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$output);
  let runtimeShapeFunction = "resizeShape";
}

def Gopt_ResizeGradOp : Gopt_InferredOp<"resize_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of resize with respect to its input";
  let description = [{
    Each element of `dy` (resize's result gradient) goes back to the input
    pixels its output read, times the weights it read them with (the same
    taps as `gopt.resize` with the same attributes), summed where outputs
    share an input pixel: nearest scatters, linear and cubic spread.
    Outputs `tf_crop_and_resize` extrapolated read nothing and give
    nothing. `x` gives only the result's shape.

    ```mlir
    %dx = gopt.resize_grad %x, %dy {scales = array<f32: 2.0, 2.0>, mode = "linear", data_format = "NCHW"}
        : (tensor<1x8x6x6xf32>, tensor<1x8x12x12xf32>) -> tensor<1x8x6x6xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   OptionalAttr<DenseF32ArrayAttr>:$scales,
                   OptionalAttr<DenseI64ArrayAttr>:$sizes,
                   OptionalAttr<DenseF32ArrayAttr>:$roi,
                   Gopt_ResizeModeAttr:$mode,
                   Gopt_CoordinateTransformationModeAttr:$coordinate_transformation_mode,
                   Gopt_NearestModeAttr:$nearest_mode,
                   DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let layoutActivationOperands = [0, 1];
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "sameShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTIMAGEOPS_TD
