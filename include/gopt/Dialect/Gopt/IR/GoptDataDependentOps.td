//===- GoptDataDependentOps.td - results shaped by data ----*- tablegen -*-===//
//
// Ops whose result shapes depend on their operands' data: non_zero,
// compress, unique, non_max_suppression and image_decoder. Their data-dependent result
// dimensions are dynamic in the dialect; the runtime shape functions give an
// upper bound, the kernels report the actual shapes, and the session runs
// them on the host between the pieces of the plan before and after them
// (`dataDependentResultShapes`; docs/architecture.md, "Results shaped by
// data"). Shape functions in lib/Shape/DataDependentShapes.cpp (shared with
// runtime/src/shapes/DataDependent.cpp), reference kernels in
// runtime/src/cpu/RefDataDependent.cpp. Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTDATADEPENDENTOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTDATADEPENDENTOPS_TD

def Gopt_NonZeroOp : Gopt_InferredOp<"non_zero", [Pure]> {
  let notDifferentiable = "an integer (index) result of data-dependent shape";
  let summary = "the coordinates of the nonzero elements";
  let description = [{
    ONNX's `NonZero` (numpy's `nonzero`): an i64 tensor of shape
    `[rank(x), n]` whose column `j` holds the coordinates of the `j`-th
    nonzero element of `x` in row-major order; `n`, the number of nonzero
    elements, is known only when the op runs (a bool is nonzero when true,
    a float when it is not 0 or -0; NaN is nonzero). `x` has rank >= 1.

    ```mlir
    %i = gopt.non_zero %x : (tensor<2x3xf32>) -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$x);
  let results = (outs Gopt_I64Tensor:$indices);
  let runtimeShapeFunction = "nonZeroShape";
  let resultElementType = "i64";
  let dataDependentResultShapes = 1;
  let onnxOpType = "NonZero";
  let onnxSinceOpset = 9;
}

def Gopt_CompressOp : Gopt_InferredOp<"compress", [Pure]> {
  let notDifferentiable = "a data-dependent result shape (which elements are kept is known only at run time)";
  let summary = "the slices (or elements) a bool vector selects";
  let description = [{
    ONNX's `Compress` (numpy's `compress`): with `axis`, the slices of `x`
    along `axis` (negative counts from the end) whose entry of `condition`
    is true, in order; without it, the selected elements of `x` flattened
    row-major, as a vector. `condition` may be shorter than the dimension
    (or element count): the slices past its end are dropped. The selected
    count is known only when the op runs.

    ```mlir
    %z = gopt.compress %x, %c {axis = 1 : i64} : (tensor<3x2xf32>, tensor<2xi1>) -> tensor<3x?xf32>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$x, Gopt_BoolTensor:$condition,
                   OptionalAttr<I64Attr>:$axis);
  let results = (outs Gopt_Tensor:$z);
  let runtimeShapeFunction = "compressShape";
  let dataDependentResultShapes = 1;
  let onnxOpType = "Compress";
  let onnxSinceOpset = 9;
}

def Gopt_UniqueOp : Gopt_InferredOp<"unique", [Pure]> {
  let notDifferentiable = "a data-dependent result shape; the values are a set, not a function with a useful derivative";
  let summary = "the distinct elements (or slices) of a tensor";
  let description = [{
    ONNX's `Unique`: `y` holds the distinct elements of `x` flattened
    (without `axis`) or its distinct slices along `axis` (compared
    lexicographically), sorted ascending with `sorted = true`, else in
    the order of their first occurrence. `indices` gives, per entry of `y`,
    the position of its first occurrence in `x`; `inverse_indices`, per
    element (slice) of `x`, its position in `y`; `counts` how often each
    entry of `y` occurs. The number of distinct entries is known only when
    the op runs.

    ```mlir
    %y, %i, %v, %c = gopt.unique %x {sorted = true} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, OptionalAttr<I64Attr>:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Gopt_NumericTensor:$y, Gopt_I64Tensor:$indices,
                 Gopt_I64Tensor:$inverse_indices, Gopt_I64Tensor:$counts);
  let runtimeShapeFunction = "uniqueShape";
  let resultElementType = "operand:0, i64, i64, i64";
  let dataDependentResultShapes = 1;
}

def Gopt_NonMaxSuppressionOp : Gopt_InferredOp<"non_max_suppression", [Pure]> {
  let notDifferentiable = "an integer (index) result of data-dependent shape";
  let summary = "boxes kept by greedy non-maximum suppression";
  let description = [{
    ONNX's `NonMaxSuppression`: `boxes` is `[batches, n, 4]`, `scores`
    `[batches, classes, n]`. Per batch and class, boxes are taken in
    descending score order (ties: lower index first), skipping those whose
    score is not above `score_threshold` and those whose intersection over
    union with a box already kept is above `iou_threshold`, until
    `max_output_boxes_per_class` are kept. The result lists the kept boxes
    as `[batch, class, box]` rows, batch by batch, class by class; its row
    count is known only when the op runs. `center_point_box = 0`: boxes are
    `[y1, x1, y2, x2]` (any two opposite corners); `1`: `[x_center,
    y_center, width, height]`. The three limits are one-element tensors
    (constants or graph inputs; the importer gives absent ones 0, 0 and
    -inf).

    ```mlir
    %k = gopt.non_max_suppression %b, %s, %m, %iou, %t : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$boxes, Gopt_FloatTensor:$scores,
                   Gopt_I64Tensor:$max_output_boxes_per_class,
                   Gopt_FloatTensor:$iou_threshold,
                   Gopt_FloatTensor:$score_threshold,
                   DefaultValuedAttr<I64Attr, "0">:$center_point_box);
  let results = (outs Gopt_I64Tensor:$selected_indices);
  let runtimeShapeFunction = "nonMaxSuppressionShape";
  let resultElementType = "i64";
  let dataDependentResultShapes = 1;
}

def Gopt_ImageDecoderOp : Gopt_InferredOp<"image_decoder", [Pure]> {
  let notDifferentiable = "an integer (pixel) result decoded from bytes";
  let summary = "decodes an encoded image (ONNX ImageDecoder)";
  let description = [{
    ONNX's `ImageDecoder` (opset 20): `encoded_stream`, the bytes of a BMP,
    JPEG, JPEG 2000, TIFF, PNG, WebP or PNM file, decoded to an image
    `[H, W, 3]` (`pixel_format` `RGB` or `BGR`) or `[H, W, 1]`
    (`Grayscale`) with the values PIL gives (ONNX's reference): gray
    replicated, alpha dropped, palettes looked up, and gray as
    `(19595 R + 38470 G + 7471 B + 0x8000) >> 16`. `H` and `W` are in the
    image's header, so no bound exists before the op runs: the session
    reads the header on the host and allocates the exact result
    (`resultShapesFromOperandData`). Images over 2^28 pixels, streams of no
    known format, truncated or corrupt data and formats whose library gopt
    was built without are refused with an error naming the op and the
    format. The importer decodes a constant stream at compile time.

    ```mlir
    %img = gopt.image_decoder %bytes {pixel_format = "BGR"} : (tensor<?xui8>) -> tensor<?x?x3xui8>
    ```
  }];
  let arguments = (ins RankedTensorOf<[UI8]>:$encoded_stream,
                   Gopt_StrEnumAttr<["RGB", "BGR", "Grayscale"], "RGB">:$pixel_format);
  let results = (outs RankedTensorOf<[UI8]>:$image);
  let runtimeShapeFunction = "imageDecoderShape";
  let dataDependentResultShapes = 1;
  let resultShapesFromOperandData = 1;
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTDATADEPENDENTOPS_TD
