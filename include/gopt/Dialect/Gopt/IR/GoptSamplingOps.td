//===- GoptSamplingOps.td - sampling at computed positions --*- tablegen -*-===//
//
// Ops that read an activation at positions given by another operand rather
// than by a fixed window: grid_sample (ONNX GridSample), roi_align (ONNX
// RoiAlign), max_pool_with_indices (ONNX MaxPool with its Indices output),
// max_unpool (ONNX MaxUnpool, which scatters back to those indices),
// col2im (ONNX Col2Im, which sums column blocks back into an image) and
// deform_conv2d (ONNX DeformConv, a convolution whose taps read at
// computed positions).
// All take [N, C, spatial...] in ONNX's layout only (no `data_format`: the
// layout passes leave them alone). Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTSAMPLINGOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTSAMPLINGOPS_TD

def Gopt_GridSampleModeAttr
    : Gopt_StrEnumAttr<["bilinear", "nearest", "bicubic"], "bilinear">;
def Gopt_GridSamplePaddingModeAttr
    : Gopt_StrEnumAttr<["zeros", "border", "reflection"], "zeros">;

def Gopt_GridSampleOp : Gopt_InferredOp<"grid_sample", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "samples an image or volume at normalized grid positions (ONNX GridSample)";
  let description = [{
    For every output position `(n, o1, ..., or)`, `grid[n, o1, ..., or]`
    holds a position in `x`'s `[N, C, D1, ..., Dr]` data (r = 1, 2 or 3
    spatial dimensions; 2 is an image `[N, C, H, W]`), normalized to
    [-1, 1] (-1 the first edge), innermost dimension first: `(x, y)` for an
    image, `(x, y, z)` for a volume. `align_corners` 1 maps -1 and 1 to the
    centres of the corner elements, 0 to their outer edges. `mode`
    `bilinear` interpolates linearly along every dimension (2^r elements),
    `nearest` rounds half to even, `bicubic` uses 4 elements along every
    dimension with Keys' coefficient -0.75 (ONNX GridSample-20's linear
    and cubic). Elements outside read `padding_mode`: `zeros` 0, `border`
    the nearest edge element, `reflection` the position reflected at the
    borders. Result `[N, C, O1, ..., Or]` for `grid` `[N, O1, ..., Or, r]`.

    ```mlir
    %y = gopt.grid_sample %x, %grid {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64}
        : (tensor<1x3x32x32xf32>, tensor<1x16x16x2xf32>) -> tensor<1x3x16x16xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$grid,
                   Gopt_GridSampleModeAttr:$mode,
                   Gopt_GridSamplePaddingModeAttr:$padding_mode,
                   DefaultValuedAttr<I64Attr, "0">:$align_corners);
  let results = (outs Gopt_FloatTensor:$y);
  // Imported by a rule of its own: GridSample-20 names the modes linear
  // and cubic.
  let runtimeShapeFunction = "gridSampleShape";
}

def Gopt_RoiAlignModeAttr : Gopt_StrEnumAttr<["avg", "max"], "avg">;
def Gopt_RoiAlignCoordinateModeAttr
    : Gopt_StrEnumAttr<["half_pixel", "output_half_pixel"], "half_pixel">;

def Gopt_RoiAlignOp : Gopt_InferredOp<"roi_align", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "pools regions of interest to a fixed size (ONNX RoiAlign)";
  let description = [{
    Each row `[x1, y1, x2, y2]` of `rois` (`[R, 4]`, in input pixels times
    `spatial_scale`) cuts a region of image `batch_indices[r]` of `x`
    (`[N, C, H, W]`) into `output_height` x `output_width` bins. A bin
    averages (`mode` `avg`) or takes the maximum (`max`) of bilinearly
    interpolated samples on a `sampling_ratio` x `sampling_ratio` grid
    (0: `ceil(bin size)` per axis). `coordinate_transformation_mode`
    `half_pixel` shifts the region by -0.5 pixels; `output_half_pixel`
    (RoiAlign-10's behaviour) does not, and makes regions at least 1x1.
    Result `[R, C, output_height, output_width]`.

    ```mlir
    %y = gopt.roi_align %x, %rois, %batch {output_height = 7 : i64, output_width = 7 : i64, sampling_ratio = 2 : i64}
        : (tensor<1x256x50x50xf32>, tensor<100x4xf32>, tensor<100xi64>) -> tensor<100x256x7x7xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$rois,
                   Gopt_I64Tensor:$batch_indices,
                   Gopt_RoiAlignModeAttr:$mode,
                   DefaultValuedAttr<I64Attr, "1">:$output_height,
                   DefaultValuedAttr<I64Attr, "1">:$output_width,
                   DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                   DefaultValuedAttr<F32Attr, "1.0f">:$spatial_scale,
                   Gopt_RoiAlignCoordinateModeAttr:$coordinate_transformation_mode);
  let results = (outs Gopt_FloatTensor:$y);
  // Imported by a rule of its own: RoiAlign-10 has no
  // coordinate_transformation_mode and means output_half_pixel.
  let runtimeShapeFunction = "roiAlignShape";
}

def Gopt_MaxRoiPoolOp : Gopt_InferredOp<"max_roi_pool", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "max-pools regions of interest to a fixed size (ONNX MaxRoiPool)";
  let description = [{
    Fast R-CNN's RoI pooling. Each row `[b, x1, y1, x2, y2]` of `rois`
    (`[R, 5]`, corners in input pixels times `spatial_scale`, rounded half
    away from zero) selects image `b` of `x` (`[N, C, H, W]`); its
    `(y2 - y1 + 1) x (x2 - x1 + 1)` pixels (at least 1 x 1) are cut into
    `pooled_shape` `[PH, PW]` bins, bin `(i, j)` rows
    `[floor(i * h / PH), ceil((i + 1) * h / PH))` from `y1` (columns
    likewise), clipped to the image, and each bin gives its channel's
    maximum, 0 for an empty bin. Result `[R, C, PH, PW]`.

    ```mlir
    %y = gopt.max_roi_pool %x, %rois {pooled_shape = array<i64: 2, 2>, spatial_scale = 0.5 : f32}
        : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$rois,
                   DenseI64ArrayAttr:$pooled_shape,
                   DefaultValuedAttr<F32Attr, "1.0f">:$spatial_scale);
  let results = (outs Gopt_FloatTensor:$y);
  let onnxOpType = "MaxRoiPool";
  let runtimeShapeFunction = "maxRoiPoolShape";
}

def Gopt_MaxRoiPoolGradOp : Gopt_InferredOp<"max_roi_pool_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of max_roi_pool with respect to x";
  let description = [{
    For `gopt.max_roi_pool` with these attributes and the gradient `dy` of
    its result: `dx`, each bin's gradient given to the element its maximum
    came from (the first in row-major order among equals), summed where
    regions overlap; empty bins give nothing. `rois` gets no gradient (its
    corners are rounded).

    ```mlir
    %dx = gopt.max_roi_pool_grad %x, %rois, %dy {pooled_shape = array<i64: 2, 2>}
        : (tensor<1x3x8x8xf32>, tensor<4x5xf32>, tensor<4x3x2x2xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$rois,
                   Gopt_FloatTensor:$dy, DenseI64ArrayAttr:$pooled_shape,
                   DefaultValuedAttr<F32Attr, "1.0f">:$spatial_scale);
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "maxRoiPoolGradShape";
}

def Gopt_GridSampleGradOp : Gopt_InferredOp<"grid_sample_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradients of grid_sample with respect to x and grid";
  let description = [{
    For `gopt.grid_sample` with these attributes and the gradient `dy` of
    its result: `dx` (each output's gradient given to the pixels it read,
    times their interpolation weights, where `padding_mode` resolved them)
    and `dgrid` (the interpolated value's derivative in the sampled
    position, summed over channels, times the normalization's scale and
    the padding's: 0 where `border` clamped the position, -1 or 1 where
    `reflection` mirrored it). `nearest` gives `grid` zeros.

    ```mlir
    %dx, %dgrid = gopt.grid_sample_grad %x, %grid, %dy {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64}
        : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>, tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$grid,
                   Gopt_FloatTensor:$dy,
                   Gopt_GridSampleModeAttr:$mode,
                   Gopt_GridSamplePaddingModeAttr:$padding_mode,
                   DefaultValuedAttr<I64Attr, "0">:$align_corners);
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dgrid);
  let runtimeShapeFunction = "gridSampleGradShape";
}

def Gopt_RoiAlignGradOp : Gopt_InferredOp<"roi_align_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of roi_align with respect to x";
  let description = [{
    For `gopt.roi_align` with these attributes and the gradient `dy` of its
    result: `dx`, each bin's gradient given back through its samples'
    bilinear weights (`avg`: every sample, divided by the bin's count;
    `max`: the corner the forward picked). The regions are constants of
    the gradient (autodiff refuses a loss that depends on `rois` through a
    parameter).

    ```mlir
    %dx = gopt.roi_align_grad %x, %rois, %batch, %dy {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64}
        : (tensor<1x3x8x8xf32>, tensor<4x4xf32>, tensor<4xi64>, tensor<4x3x2x2xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$rois,
                   Gopt_I64Tensor:$batch_indices, Gopt_FloatTensor:$dy,
                   Gopt_RoiAlignModeAttr:$mode,
                   DefaultValuedAttr<I64Attr, "1">:$output_height,
                   DefaultValuedAttr<I64Attr, "1">:$output_width,
                   DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                   DefaultValuedAttr<F32Attr, "1.0f">:$spatial_scale,
                   Gopt_RoiAlignCoordinateModeAttr:$coordinate_transformation_mode);
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "roiAlignGradShape";
}

def Gopt_MaxPoolWithIndicesOp
    : Gopt_InferredOp<"max_pool_with_indices", [Pure, Gopt_Differentiable]> {
  let summary = "max pooling that also gives the position of each maximum";
  let description = [{
    Maximum over `kernel`-sized windows of `x` `[N, C, spatial...]` (one to
    three spatial dims), taps `dilations` apart, as `gopt.max_pool3d` over
    any number of spatial dims; the first maximum in row-major window order
    wins and padded elements never do. `indices` holds the flat index of
    each maximum in `x`: `(n * C + c) * S + s`, where `s` is the spatial
    offset in row-major order, or with `storage_order` 1 in column-major
    order (ONNX MaxPool's Indices). Takes integer element types too (ONNX's
    8-bit MaxPool runs here). `pads` holds (before, after) per spatial dim.

    ```mlir
    %y, %i = gopt.max_pool_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
        : (tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   Gopt_PaddingAttr:$padding,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<I64Attr, "0">:$storage_order);
  let results = (outs Gopt_NumericTensor:$y, Gopt_I64Tensor:$indices);
  let resultElementType = "operand:0, i64";
  let runtimeShapeFunction = "maxPoolWithIndicesShape";
}

def Gopt_MaxUnpoolOp : Gopt_InferredOp<"max_unpool", [Pure, Gopt_Differentiable]> {
  let summary = "scatters pooled maxima back to their positions (ONNX MaxUnpool)";
  let description = [{
    The unpooled tensor, `[N, C]` and per spatial dim `(in - 1) * stride +
    kernel - pad_before - pad_after` (`pads` holds (before, after) per
    spatial dim), is zero but for `x[i]` at flat index `indices[i]` (the
    indices `gopt.max_pool_with_indices` gives, row-major over the whole
    tensor). `x` and `indices` are `[N, C, spatial...]` of one shape. With
    `output_shape` (ONNX's optional input) the result is the unpooled
    tensor padded with zeros (or cropped) at the end of each dim to that
    shape, as ONNX's reference has it. An index outside the unpooled tensor
    is an error at run time.

    ```mlir
    %y = gopt.max_unpool %x, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>}
        : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_I64Tensor:$indices,
                   DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads,
                   OptionalAttr<DenseI64ArrayAttr>:$output_shape);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "maxUnpoolShape";
}

def Gopt_Col2ImOp : Gopt_InferredOp<"col2im", [Pure, Gopt_Differentiable]> {
  let summary = "sums column blocks back into an image (ONNX Col2Im)";
  let description = [{
    The inverse of im2col (ONNX `Col2Im`, PyTorch's `fold`): `x` `[N, C *
    K, L]` holds, per channel, `K` = product of `block_shape` values of
    each of `L` blocks. Block `l` (row-major over the blocks' grid, which
    has `(image + pad_before + pad_after - (dilation * (block - 1) + 1)) /
    stride + 1` positions per spatial dim) starts at `position * stride -
    pad_before`, its elements `dilations` apart; element `k` (row-major
    over `block_shape`) of channel `c` is `x[n, c * K + k, l]`. The result
    `[N, C, image_shape...]` is the sum of every element that lands on
    each position; elements in the padding are dropped. `pads` holds
    (before, after) per spatial dim; `L` must be the grid's size.

    ```mlir
    %y = gopt.col2im %x {image_shape = array<i64: 5, 5>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
        : (tensor<1x12x16xf32>) -> tensor<1x3x5x5xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DenseI64ArrayAttr:$image_shape,
                   DenseI64ArrayAttr:$block_shape,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "col2imShape";
}

def Gopt_DeformConv2DOp : Gopt_InferredOp<"deform_conv2d", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "2-D deformable convolution (ONNX DeformConv)";
  let description = [{
    A convolution of `x` `[N, C, H, W]` with `filter` `[Cout, C / group,
    KH, KW]` whose taps are moved: tap `(i, j)` of output position `(oh,
    ow)` reads `x` at `(oh * stride_h - pad_top + i * dilation_h + dy,
    ow * stride_w - pad_left + j * dilation_w + dx)`, bilinearly
    interpolated (positions outside the image read 0), times the mask's
    value there (1 without `mask`), then `+ bias[oc]`. `offset` `[N,
    offset_group * 2 * KH * KW, Ho, Wo]` holds `(dy, dx)` per offset group
    and tap (taps row-major); `mask` `[N, offset_group * KH * KW, Ho, Wo]`
    one value per offset group and tap. The input channels split into
    `offset_group` consecutive groups, each moved by its offsets, and into
    `group` groups as in a grouped convolution. `pads` holds `[top,
    bottom, left, right]`; `Ho, Wo` are the convolution's output size
    (ONNX DeformConv, torchvision's deform_conv2d).

    ```mlir
    %y = gopt.deform_conv2d %x, %w, %offset, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
        : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$filter,
                   Gopt_FloatTensor:$offset, Gopt_FloatTensor:$bias,
                   Optional<Gopt_FloatTensor>:$mask,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   DefaultValuedAttr<I64Attr, "1">:$offset_group);
  let results = (outs Gopt_FloatTensor:$y);
  // The filter and the bias (the offsets and mask are computed).
  let trainableOperands = [1, 3];
  let runtimeShapeFunction = "deformConv2dShape";
}

def Gopt_DeformConv2DGradOp : Gopt_InferredOp<"deform_conv2d_grad", [Pure, Gopt_ComputeHeavy]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradients of deform_conv2d with respect to x, filter, offset and mask";
  let description = [{
    For `gopt.deform_conv2d` with these attributes and the gradient `dy` of
    its result: `dx` (each tap's `dy` times the filter weight and mask,
    given to the four pixels its bilinear sample read, times their
    weights), `dfilter` (`dy` times the sampled, masked values, summed over
    the batch and positions), `doffset` (the sample's slope in the tap's
    row and column offset times the mask, summed over the offset group's
    channels) and `dmask` (the sampled value times the filter-weighted
    `dy`). Without `mask`, `dmask` is the gradient of an all-ones mask
    (`[N, offset_group * KH * KW, Ho, Wo]`), which autodiff drops. The
    bias's gradient (`dy` summed over N, Ho, Wo) is a `reduce_sum`.
    A sample on a pixel row or column (an integer position, a kink) takes
    the slope of the cell that starts there, as torchvision does.

    ```mlir
    %dx, %dw, %doff, %dm = gopt.deform_conv2d_grad %x, %w, %offset, %dy {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
        : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<1x6x8x8xf32>)
        -> (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<1x9x8x8xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$filter,
                   Gopt_FloatTensor:$offset, Gopt_FloatTensor:$dy,
                   Optional<Gopt_FloatTensor>:$mask,
                   DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   DefaultValuedAttr<I64Attr, "1">:$offset_group);
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dfilter,
                 Gopt_FloatTensor:$doffset, Gopt_FloatTensor:$dmask);
  let runtimeShapeFunction = "deformConv2dGradShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTSAMPLINGOPS_TD
