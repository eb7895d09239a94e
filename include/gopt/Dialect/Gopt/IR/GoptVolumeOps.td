//===- GoptVolumeOps.td - 3-D convolution and pooling -------*- tablegen -*-===//
//
// Windows over three spatial dimensions (video and volumetric models): the
// convolution, transposed convolution and max/average pooling of ONNX's
// Conv, ConvTranspose, MaxPool and AveragePool over [N, C, D, H, W].
// Included by GoptOps.td.
//
// One layout only, NCDHW (ONNX's and PyTorch's), and OIDHW filters, so the
// ops have no `data_format`: the layout passes leave them alone (no
// `layoutActivationOperands`, no `Gopt_LayoutAgnostic`), and the 2-D ops'
// layout, fusion and gradient rules stay as they are. Window attributes
// hold one entry per spatial dim in (D, H, W) order; `pads` holds
// (before, after) per dim, `[d0, d1, h0, h1, w0, w1]`, as the 2-D ops'
// `[top, bottom, left, right]`. docs/architecture.md says why 3-D is a
// family of its own and why dilated 1-D and 2-D max pools run as
// `max_pool3d`.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTVOLUMEOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTVOLUMEOPS_TD

def Gopt_Conv3DOp : Gopt_InferredOp<"conv3d", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "3-D convolution (NCDHW), optionally with bias";
  let description = [{
    Convolves `input` `[N, Cin, D, H, W]` with `filter` OIDHW
    `[Cout, Cin/groups, KD, KH, KW]`. `padding` is `"EXPLICIT"` (with `pads`
    `[d0, d1, h0, h1, w0, w1]`), `"SAME"` or `"VALID"` (conv2d's rules per
    dim). The optional `bias` (`[Cout]`) is added to every output element.

    ```mlir
    %y = gopt.conv3d %x, %w, %b {strides = array<i64: 1, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>}
        : (tensor<?x3x16x112x112xf32>, tensor<64x3x3x3x3xf32>, tensor<64xf32>) -> tensor<?x64x16x56x56xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$filter,
                   Optional<Gopt_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Gopt_FloatTensor:$output);
  let trainableOperands = [1, 2];
  let runtimeShapeFunction = "conv3dShape";
  let flopFunction = "conv3dFlops";
}

def Gopt_Conv3DTransposeOp : Gopt_InferredOp<"conv3d_transpose", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "3-D transposed convolution (NCDHW), optionally with bias";
  let description = [{
    `gopt.conv2d_transpose` over three spatial dims: every input element
    scatters `filter`-weighted copies of itself into the output, `strides`
    apart. `filter` is ONNX ConvTranspose's weight, the forward conv's OIDHW
    `[Cin, Cout/groups, KD, KH, KW]`. Output size per spatial dim:
    `(in - 1) * stride + (k - 1) * dilation + 1 - pad_begin - pad_end +
    output_padding`; `pads` (`[d0, d1, h0, h1, w0, w1]`) crop the full
    output, `output_padding` (`[d, h, w]`) adds elements at the end that only
    the bias reaches beyond the full output.

    ```mlir
    %y = gopt.conv3d_transpose %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, output_padding = array<i64: 0, 0, 0>}
        : (tensor<1x16x4x8x8xf32>, tensor<16x8x2x2x2xf32>) -> tensor<1x8x8x16x16xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$filter,
                   Optional<Gopt_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Gopt_FloatTensor:$output);
  let trainableOperands = [1, 2];
  let runtimeShapeFunction = "conv3dTransposeShape";
  let flopFunction = "conv3dTransposeFlops";
}

class Gopt_Pool3DOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits,
                                            [Pure, SameOperandsAndResultElementType,
                                             Gopt_ComputeHeavy])> {
  let summary = what # " pooling over 3-D windows (NCDHW)";
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "pool3dShape";
}

def Gopt_MaxPool3DOp : Gopt_Pool3DOp<"max_pool3d", "max", [Gopt_Differentiable]> {
  let description = [{
    Maximum over `kernel`-sized windows of `x` `[N, C, D, H, W]`, taps
    `dilations` apart; padding follows conv3d's rules and padded elements
    never win (a NaN does). `ceil_mode` rounds the output size up (the last
    window must start inside the input or its leading padding). ONNX's
    dilated 1-D and 2-D MaxPool import as this op over unit leading dims.

    ```mlir
    %y = gopt.max_pool3d %x {kernel = array<i64: 3, 3, 3>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>}
        : (tensor<?x64x16x56x56xf32>) -> tensor<?x64x8x28x28xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
}

def Gopt_AvgPool3DOp : Gopt_Pool3DOp<"avg_pool3d", "average", [Gopt_Differentiable]> {
  let description = [{
    Mean over `kernel`-sized windows of `x` `[N, C, D, H, W]`, taps
    `dilations` apart. The divisor counts the window's taps inside the input,
    or with `count_include_pad` those inside the padded input (never the
    extra end `ceil_mode` adds); a window with no such tap gives 0.

    ```mlir
    %y = gopt.avg_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
        : (tensor<?x64x16x56x56xf32>) -> tensor<?x64x8x28x28xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
}

//===----------------------------------------------------------------------===//
// Gradients
//
// Each takes its forward op's attributes unchanged (the kernels resolve
// SAME/VALID padding and ceil_mode from `x`'s shape as the forward does)
// and checks `dy` against the forward's result shape. conv3d_transpose's
// gradient is written with conv3d and conv3d_grad (it is conv3d's
// adjoint), the bias gradients with reduce_sum.
//===----------------------------------------------------------------------===//

def Gopt_Conv3DGradOp : Gopt_InferredOp<"conv3d_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradients of conv3d with respect to its input and filter";
  let description = [{
    For `gopt.conv3d` of `input` and `filter` with these attributes and the
    gradient `dy` of its output: `dinput` (each output's gradient spread
    back over the inputs its window read, times the filter taps) and
    `dfilter` (each tap's sum over the batch and output positions of
    input times `dy`). `input` and `filter` also give the results' shapes.

    ```mlir
    %dx, %dw = gopt.conv3d_grad %x, %w, %dy {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>}
        : (tensor<2x3x4x6x6xf32>, tensor<8x3x3x3x3xf32>, tensor<2x8x4x6x6xf32>) -> (tensor<2x3x4x6x6xf32>, tensor<8x3x3x3x3xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$filter,
                   Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Gopt_FloatTensor:$dinput, Gopt_FloatTensor:$dfilter);
  let runtimeShapeFunction = "conv3dGradShape";
}

class Gopt_Pool3DGradOp<string mnemonic, string what>
    : Gopt_InferredOp<mnemonic, [Pure, SameOperandsAndResultElementType]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of " # what;
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "pool3dGradShape";
}

def Gopt_MaxPool3DGradOp : Gopt_Pool3DGradOp<"max_pool3d_grad", "max_pool3d"> {
  let description = [{
    Routes each window's gradient to the element `gopt.max_pool3d` picked
    (the first maximum in window order; a NaN wins as in the forward),
    summing where windows overlap.

    ```mlir
    %dx = gopt.max_pool3d_grad %x, %dy {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
        : (tensor<1x2x4x4x4xf32>, tensor<1x2x2x2x2xf32>) -> tensor<1x2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
}

def Gopt_AvgPool3DGradOp : Gopt_Pool3DGradOp<"avg_pool3d_grad", "avg_pool3d"> {
  let description = [{
    Spreads each window's gradient evenly over the input elements
    `gopt.avg_pool3d` averaged, divided by the same count, summing where
    windows overlap. `x` gives only the result's shape.

    ```mlir
    %dx = gopt.avg_pool3d_grad %x, %dy {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
        : (tensor<1x2x4x4x4xf32>, tensor<1x2x2x2x2xf32>) -> tensor<1x2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTVOLUMEOPS_TD
