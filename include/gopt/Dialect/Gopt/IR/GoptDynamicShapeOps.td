//===- GoptDynamicShapeOps.td - shapes computed at run time -*- tablegen -*-===//
//
// Ops whose result shapes depend on the values of an operand that the graph
// computes from other tensors' shapes (Shape -> Slice -> Cast -> Concat ->
// Reshape) and that cannot fold at compile time because more than one
// dimension is dynamic. The runtime session evaluates those small integer
// computations on the host while it resolves shapes (docs/architecture.md,
// "Shapes computed in the graph"). Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD

def Gopt_DynamicReshapeOp : Gopt_InferredOp<"dynamic_reshape", [Pure, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Reshape"];
  let summary = "reshape to a target shape computed at run time";
  let description = [{
    ONNX's `Reshape` with a target shape that is a value of the graph rather
    than an attribute: `shape` is a 1-D i64 tensor with one entry per result
    dimension. An entry of -1 (at most one) is inferred from the element
    count; an entry of 0 copies the operand's dimension at the same index
    unless `allow_zero` is set, in which case it is a zero-sized dimension.
    The result keeps the operand's elements in row-major order, so the
    target must hold exactly the operand's element count.

    The importers emit it only when a computed shape does not fold to a
    `gopt.reshape` (more than one dimension known only at run time). The
    runtime computes `shape` on the host while resolving shapes
    (`hostValueOperands`), so the memory plan follows every input size. The
    declared result type may be more static than the inferred one (all
    dynamic, or exact when `shape` is a constant). With a constant `shape`
    it canonicalizes to `gopt.reshape`.

    ```mlir
    %y = gopt.dynamic_reshape %x, %s : (tensor<?x120x?xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$allow_zero);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "dynamicReshapeShape";
  let hostValueOperands = [1];
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Dynamic ops: a static op whose attributes are operand values
//===----------------------------------------------------------------------===//

// An op that is a static op (`staticName`) with some attributes given as
// operands whose values are known only at run time (computed from shapes,
// or graph inputs). The session reads those operands on the host each time
// shapes are resolved (re-resolving when a graph input they depend on
// changes value), forms the static op's attributes from them
// (`hostValueAttrs`, and the `valueAttrAdapter` for framework meanings),
// and runs the static op's shape function and kernel, so a dynamic op has
// no kernel or runtime shape function of its own. With constant value
// operands it canonicalizes to the static op. Types: `rankRule` gives the
// result rank ("operand:N", "length:N" (operand N's static length),
// "max(operand:0,length:1)", "operand:0+length:1", "operand:0-length:1",
// "reduce" (keep_dims), or a number: a rank of its own); dimensions that
// depend on values are dynamic.
// Declared result types may be more static (the importer knows more).
class Gopt_DynamicOp<string mnemonic, string staticName, list<int> valueOperands,
                     list<string> valueAttrs, string rankRule,
                     list<Trait> traits = [], bit hasKeepDims = 0>
    : Gopt_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptorWithIsCompatible])> {
  let missingGradient = "differentiated as its static op once its value operands fold to constants; not with run-time values";
  let staticOp = staticName;
  let hostValueOperands = valueOperands;
  let hostValueAttrs = valueAttrs;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::gopt::areCompatibleReturnTypes(l, r);
    }
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      if (::mlir::succeeded(::gopt::detail::inferDynamicOpTypes(
              getOperationName(), adaptor.getOperands(),
              }] # !if(hasKeepDims, "adaptor.getKeepDims()", "false") # [{,
              "}] # rankRule # [{", "}] # resultElementType # [{",
              ::std::nullopt, inferred)))
        return ::mlir::success();
      inferred.assign(getOperationName() == "gopt.dynamic_top_k" ? 2 : 1,
                      ::gopt::detail::getPlaceholderType(
                          context, adaptor.getOperands()));
      return ::mlir::success();
    }
    ::mlir::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type> inferred;
      Adaptor adaptor(*this);
      return ::gopt::detail::inferDynamicOpTypes(
          getOperationName(), getOperation()->getOperands(),
          }] # !if(hasKeepDims, "adaptor.getKeepDims()", "false") # [{,
          "}] # rankRule # [{", "}] # resultElementType # [{", getLoc(),
          inferred);
    }
    void $cppClass::getCanonicalizationPatterns(
        ::mlir::RewritePatternSet &results, ::mlir::MLIRContext *context) {
      ::gopt::detail::addDynamicToStaticPattern(results, context,
                                                 getOperationName());
    }
  }];
}

def Gopt_DynamicExpandOp : Gopt_DynamicOp<"dynamic_expand", "expand", [1], ["shape"],
                                          "max(operand:0,length:1)", [Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Expand"];
  // Differentiated with run-time values (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt.expand to a shape computed at run time";
  let description = [{
    `gopt.expand` whose `shape` is an i64 operand (ONNX `Expand` with a
    computed shape; ConstantOfShape as the expansion of its scalar).
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$shape);
  let results = (outs Gopt_AnyTensor:$y);
}

def Gopt_DynamicTileOp : Gopt_DynamicOp<"dynamic_tile", "tile", [1], ["repeats"],
                                        "operand:0", [Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Tile"];
  // Differentiated with run-time values (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt.tile with repeats computed at run time";
  let description = [{ `gopt.tile` whose `repeats` is an i64 operand. }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$repeats);
  let results = (outs Gopt_AnyTensor:$y);
}

def Gopt_DynamicSliceOp : Gopt_DynamicOp<"dynamic_slice", "slice", [1, 2, 3, 4],
                                         ["starts", "ends", "axes", "steps"],
                                         "operand:0", [Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Slice"];
  // Differentiated with run-time values (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt.slice with ONNX's bounds computed at run time";
  let description = [{
    ONNX's `Slice` with operand bounds: `starts`, `ends`, `axes` and
    `steps` have one entry per sliced axis, negative starts, ends and axes
    count from the end, bounds are clamped to the dimension (with ONNX's
    backward rule for negative steps). It runs as `gopt.slice`; a step of 0
    is an error naming the op when shapes are resolved.
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$starts,
                   Gopt_I64Tensor:$ends, Gopt_I64Tensor:$axes,
                   Gopt_I64Tensor:$steps);
  let results = (outs Gopt_AnyTensor:$y);
  let valueAttrAdapter = "shape::adaptOnnxSlice";
}

def Gopt_DynamicUnsqueezeOp : Gopt_DynamicOp<"dynamic_unsqueeze", "reshape", [1], ["axes"],
                                             "operand:0+length:1", [Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Unsqueeze"];
  // Differentiated as it is (dy reshaped back): no missing gradient.
  let missingGradient = "";
  let summary = "insert size-1 dimensions at axes computed at run time";
  let description = [{
    ONNX's `Unsqueeze` with an operand `axes` (negative count from the end
    of the result); runs as `gopt.reshape`.
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$axes);
  let results = (outs Gopt_AnyTensor:$y);
  let valueAttrAdapter = "shape::adaptOnnxUnsqueeze";
}

def Gopt_DynamicSqueezeOp : Gopt_DynamicOp<"dynamic_squeeze", "reshape", [1], ["axes"],
                                           "operand:0-length:1", [Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Squeeze"];
  // Differentiated as it is (dy reshaped back): no missing gradient.
  let missingGradient = "";
  let summary = "remove size-1 dimensions at axes computed at run time";
  let description = [{
    ONNX's `Squeeze` with an operand `axes` (negative count from the end);
    each must be a dimension of 1. Runs as `gopt.reshape`.
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$axes);
  let results = (outs Gopt_AnyTensor:$y);
  let valueAttrAdapter = "shape::adaptOnnxSqueeze";
}

def Gopt_DynamicPadOp : Gopt_DynamicOp<"dynamic_pad", "pad", [1, 2], ["pads", "value"],
                                       "operand:0", [Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Pad"];
  // Differentiated with run-time values (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt.pad with ONNX's pads and value computed at run time";
  let description = [{
    ONNX's `Pad` with operand `pads` in ONNX's order (every dimension's
    begin, then every end) and a one-element `value`; runs as `gopt.pad`.
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_I64Tensor:$pads,
                   Gopt_NumericTensor:$value,
                   Gopt_StrEnumAttr<["constant", "reflect", "edge", "wrap"], "constant">:$mode);
  let results = (outs Gopt_AnyTensor:$y);
  let valueAttrAdapter = "shape::adaptOnnxPads";
}

def Gopt_DynamicResizeOp : Gopt_DynamicOp<"dynamic_resize", "resize", [1, 2, 3],
                                          ["roi", "scales", "sizes"], "operand:0",
                                          [Gopt_Differentiable]> {
  // Differentiated with run-time values: dynamic_resize_grad.
  let missingGradient = "";
  let summary = "gopt.resize with ONNX's roi, scales or sizes computed at run time";
  let description = [{
    ONNX's `Resize` (and `Upsample`) of a rank-4 NCHW `input` whose `roi`,
    `scales` or `sizes` are values of the graph (graph inputs fed at run
    time, or computed from data). Each is a 1-D tensor in ONNX's form, one
    entry per dimension (`roi` two: every start, then every end), or empty
    when absent: exactly one of `scales` and `sizes` is non-empty, and
    `roi` only with `tf_crop_and_resize`. N and C keep their size (scales
    of 1, sizes equal to the input's); runs as `gopt.resize` on H and W.
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$roi,
                   Gopt_FloatTensor:$scales, Gopt_I64Tensor:$sizes,
                   Gopt_ResizeModeAttr:$mode,
                   Gopt_CoordinateTransformationModeAttr:$coordinate_transformation_mode,
                   Gopt_NearestModeAttr:$nearest_mode,
                   DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value,
                   // Required: gopt.resize's default layout is NHWC.
                   Gopt_RequiredStrEnumAttr<["NCHW"]>:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let results = (outs Gopt_FloatTensor:$output);
  let valueAttrAdapter = "shape::adaptOnnxResize";
}

def Gopt_DynamicResizeGradOp : Gopt_DynamicOp<"dynamic_resize_grad", "resize_grad",
                                              [2, 3, 4], ["roi", "scales", "sizes"],
                                              "operand:0"> {
  let missingGradient = "";
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gopt.resize_grad of a dynamic_resize, with its run-time roi, scales or sizes";
  let description = [{
    The gradient of `gopt.dynamic_resize` with respect to its input: `x`
    (the input, which gives dx's shape), `dy` (the result's gradient) and
    the forward's `roi`, `scales` and `sizes` in ONNX's form; runs as
    `gopt.resize_grad` with the attributes dynamic_resize runs as (the
    same adapter), so it replays the same taps.
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy,
                   Gopt_FloatTensor:$roi, Gopt_FloatTensor:$scales,
                   Gopt_I64Tensor:$sizes,
                   Gopt_ResizeModeAttr:$mode,
                   Gopt_CoordinateTransformationModeAttr:$coordinate_transformation_mode,
                   Gopt_NearestModeAttr:$nearest_mode,
                   DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value,
                   Gopt_RequiredStrEnumAttr<["NCHW"]>:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let results = (outs Gopt_FloatTensor:$dx);
  let valueAttrAdapter = "shape::adaptOnnxResize";
}

def Gopt_DynamicMaxUnpoolOp : Gopt_DynamicOp<"dynamic_max_unpool", "max_unpool", [2],
                                             ["output_shape"], "operand:0", [Gopt_Differentiable]> {
  // Differentiated with a run-time output_shape (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt.max_unpool with output_shape computed at run time";
  let description = [{
    ONNX's `MaxUnpool` whose `output_shape` (the whole result shape, one
    entry per dimension of `x`) is a graph value; runs as `gopt.max_unpool`.
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_I64Tensor:$indices,
                   Gopt_I64Tensor:$output_shape, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads);
  let results = (outs Gopt_FloatTensor:$y);
}

def Gopt_DynamicStftOp : Gopt_DynamicOp<"dynamic_stft", "stft", [2], ["frame_step"], "4", [Gopt_Differentiable]> {
  // Differentiated as it is (stft's rule with the run-time frame_step).
  let missingGradient = "";
  let summary = "gopt.stft with frame_step computed at run time";
  let description = [{
    ONNX's `STFT` whose `frame_step` is a one-element i64 graph value; the
    importer always gives a window (ones for a bare `frame_length`, expanded
    at run time when that is fed too). Runs as `gopt.stft`.
  }];
  let arguments = (ins Gopt_FloatTensor:$signal, Gopt_FloatTensor:$window,
                   Gopt_I64Tensor:$frame_step,
                   DefaultValuedAttr<I64Attr, "0">:$frame_length,
                   DefaultValuedAttr<BoolAttr, "true">:$onesided);
  let results = (outs Gopt_FloatTensor:$output);
}

def Gopt_DynamicMelWeightMatrixOp
    : Gopt_DynamicOp<"dynamic_mel_weight_matrix", "mel_weight_matrix",
                     [0, 1, 2, 3, 4],
                     ["num_mel_bins", "dft_length", "sample_rate",
                      "lower_edge_hertz", "upper_edge_hertz"], "2"> {
  let notDifferentiable = "a generated tensor of scalar operands that are never parameters";
  let missingGradient = "";
  let summary = "gopt.mel_weight_matrix with its sizes computed at run time";
  let description = [{
    ONNX's `MelWeightMatrix` whose inputs are graph values: three
    one-element integer tensors (`num_mel_bins`, `dft_length`,
    `sample_rate`) and two one-element f32 tensors (the edge frequencies).
    Runs as `gopt.mel_weight_matrix`.
  }];
  let arguments = (ins Gopt_I64Tensor:$num_mel_bins,
                   Gopt_I64Tensor:$dft_length, Gopt_I64Tensor:$sample_rate,
                   Gopt_FloatTensor:$lower_edge_hertz,
                   Gopt_FloatTensor:$upper_edge_hertz);
  let results = (outs F32Tensor:$output);
  let resultElementType = "f32";
}

def Gopt_DynamicTopKOp : Gopt_DynamicOp<"dynamic_top_k", "top_k", [1], ["k"], "operand:0", [Gopt_Differentiable]> {
  // Differentiated as it is: no missing gradient.
  let missingGradient = "";
  let summary = "gopt.top_k with k computed at run time";
  let description = [{ `gopt.top_k` whose `k` is a one-element i64 operand. }];
  let arguments = (ins Gopt_NumericTensor:$x, Gopt_I64Tensor:$k,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Gopt_NumericTensor:$values, Gopt_I64Tensor:$indices);
  let resultElementType = "operand:0, i64";
}

def Gopt_DynamicCumSumOp : Gopt_DynamicOp<"dynamic_cumsum", "cumsum", [1], ["axis"], "operand:0", [Gopt_Differentiable]> {
  // Differentiated as it is: no missing gradient.
  let missingGradient = "";
  let summary = "gopt.cumsum with its axis computed at run time";
  let description = [{
    ONNX's `CumSum` whose `axis` is a graph value: `gopt.cumsum` with the
    one-element i64 operand as its `axis` (negative counts from the end).
  }];
  let arguments = (ins Gopt_NumericTensor:$x, Gopt_I64Tensor:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Gopt_NumericTensor:$y);
}

def Gopt_DynamicRangeOp : Gopt_DynamicOp<"dynamic_range", "range", [0, 1, 2],
                                         ["start", "limit", "delta"], "1"> {
  let notDifferentiable = "a generated tensor of scalar operands that are never parameters";
  let missingGradient = "";
  let summary = "gopt.range with bounds computed at run time";
  let description = [{
    ONNX's `Range` with scalar operands; the result has their element type.
  }];
  let arguments = (ins Gopt_NumericTensor:$start, Gopt_NumericTensor:$limit,
                   Gopt_NumericTensor:$delta);
  let results = (outs Gopt_NumericTensor:$y);
}

def Gopt_RangeOp : Gopt_Op<"range", [Pure]> {
  let notDifferentiable = "a generated sequence of scalar operands that are never parameters";
  let summary = "evenly spaced values";
  let description = [{
    `start, start + delta, ...` below `limit` (above it for a negative
    `delta`): `max(ceil((limit - start) / delta), 0)` elements of the
    result's element type (ONNX `Range`). Importers fold constant ranges;
    this op is what `gopt.dynamic_range` runs as.

    ```mlir
    %y = gopt.range {start = 0.0, limit = 5.0, delta = 1.0} : () -> tensor<5xi64>
    ```
  }];
  let arguments = (ins F64Attr:$start, F64Attr:$limit, F64Attr:$delta);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "rangeShape";
  let resultElementType = "any";
  // No operand gives the element type: the result type is declared.
  let assemblyFormat = [{ attr-dict `:` type($y) }];
  let hasVerifier = 1;
}

class Gopt_DynamicReduceOp<string mnemonic>
    : Gopt_DynamicOp<"dynamic_" # mnemonic, mnemonic, [1], ["axes"], "reduce", [Gopt_Differentiable], 1> {
  // Differentiated with run-time axes (DynamicShapeGradients.cpp).
  let missingGradient = "";
  let summary = "gopt." # mnemonic # " over axes computed at run time";
  let description = "`gopt." # mnemonic # "` whose `axes` is an i64 operand "
                    # "(ONNX's reductions at opset 18, ReduceSum at 13).";
  let arguments = (ins Gopt_NumericTensor:$x, Gopt_I64Tensor:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs Gopt_NumericTensor:$y);
}
def Gopt_DynamicReduceSumOp : Gopt_DynamicReduceOp<"reduce_sum">;
def Gopt_DynamicReduceMeanOp : Gopt_DynamicReduceOp<"reduce_mean">;
def Gopt_DynamicReduceMaxOp : Gopt_DynamicReduceOp<"reduce_max">;
def Gopt_DynamicReduceMinOp : Gopt_DynamicReduceOp<"reduce_min">;
def Gopt_DynamicReduceProdOp : Gopt_DynamicReduceOp<"reduce_prod">;

#endif // GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD
