//===- GoptIndexingOps.td - gather, scatter, arg max, cumsum -*- tablegen -*-===//
//
// Ops that read or write a tensor at positions another tensor holds
// (ONNX's Gather*, Scatter*; TensorFlow's GatherV2, GatherNd), the index
// reductions (arg_max, arg_min, top_k) and cumsum. Included by GoptOps.td.
//
// Indices are i32 or i64 and may be negative (counting from the end of
// their dimension, as ONNX and TensorFlow allow); an index outside
// [-dim, dim) is a run-time error naming the op, never an out-of-bounds
// access.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTINDEXINGOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTINDEXINGOPS_TD

def Gopt_IndexTensor : RankedTensorOf<[I32, I64]>;

def Gopt_ScatterReductionAttr : Gopt_StrEnumAttr<["none", "add", "mul", "max", "min"], "none">;

def Gopt_GatherOp : Gopt_InferredOp<"gather", [Pure, Gopt_DataMovement, Gopt_MixedPrecisionClear, Gopt_Differentiable]> {
  let trainableOperands = [0];
  let summary = "slices of a tensor along an axis at given indices";
  let description = [{
    ONNX's `Gather` and TensorFlow's `GatherV2` (with `batch_dims = 0`):
    `y[i_0..i_{a-1}, j_0..j_{q-1}, k...] = x[i_0..i_{a-1}, indices[j...], k...]`
    for `a = axis` (negative counts from the end). The result's shape is
    `x.shape[:axis] + indices.shape + x.shape[axis+1:]`; 0-d indices drop
    the axis. Embedding lookups are this op with `axis = 0`. Folds when
    both operands are constants (`gopt-fold-constants`).

    ```mlir
    %y = gopt.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<?x16xi64>) -> tensor<?x16x64xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "gatherShape";
  let onnxOpType = "Gather";
}

def Gopt_GatherGradOp : Gopt_InferredOp<"gather_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of gather with respect to its data operand";
  let description = [{
    `dx` has the shape of `x` (read for its shape only) and is zero except
    where `gopt.gather %x, %indices {axis}` read: each slice of `dy` is added
    into the slice of `dx` its index names, so repeated indices accumulate
    (an embedding row used twice gets both gradients).

    ```mlir
    %dx = gopt.gather_grad %table, %ids, %dy {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<?x16xi64>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_IndexTensor:$indices,
                   Gopt_FloatTensor:$dy, DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Gopt_FloatTensor:$dx);
  let runtimeShapeFunction = "gatherGradShape";
}

def Gopt_GatherElementsOp : Gopt_InferredOp<"gather_elements", [Pure, Gopt_DataMovement, Gopt_MixedPrecisionClear, Gopt_Differentiable]> {
  let summary = "elements of a tensor at per-element indices along an axis";
  let description = [{
    ONNX's `GatherElements` (numpy's `take_along_axis`): `x` and `indices`
    have one rank, the result has `indices`' shape, and
    `y[i...] = x[i_0, ..., indices[i...], ..., i_(r-1)]` with the index
    replacing coordinate `axis`. Along the other axes `indices` is no larger
    than `x`.

    ```mlir
    %y = gopt.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "gatherElementsShape";
  let onnxOpType = "GatherElements";
  let onnxSinceOpset = 11;
}

def Gopt_GatherNDOp : Gopt_InferredOp<"gather_nd", [Pure, Gopt_DataMovement, Gopt_MixedPrecisionClear, Gopt_Differentiable]> {
  let summary = "slices of a tensor at index tuples";
  let description = [{
    ONNX's `GatherND` and TensorFlow's `GatherNd`: the last dimension of
    `indices` (size `k`) holds coordinates into `x` after its first
    `batch_dims` dimensions, which `indices` shares. The result's shape is
    `indices.shape[:-1] + x.shape[batch_dims + k:]`.

    ```mlir
    %y = gopt.gather_nd %x, %i : (tensor<4x5x6xf32>, tensor<3x2xi64>) -> tensor<3x6xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, Gopt_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "gatherNDShape";
  let onnxOpType = "GatherND";
  let onnxSinceOpset = 12;
}

def Gopt_ScatterElementsOp : Gopt_InferredOp<"scatter_elements", [Pure, Gopt_DataMovement, Gopt_Differentiable]> {
  let summary = "a copy of a tensor with elements replaced at per-element indices";
  let description = [{
    ONNX's `ScatterElements` (and the older `Scatter`): `y` is `x`, then for every position `i` of
    `indices` (which has the shape of `updates` and the rank of `x`) the
    element of `y` at `i` with coordinate `axis` replaced by `indices[i]`
    becomes `updates[i]` (`reduction = "none"`), or is added to or
    multiplied by it (`"add"`, `"mul"`), or the larger or smaller of the two
    (`"max"`, `"min"`; a NaN wins). With `"none"` and an index that
    repeats, the update that comes last in row-major order wins (ONNX leaves
    it undefined).

    ```mlir
    %y = gopt.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, Gopt_IndexTensor:$indices,
                   Gopt_NumericTensor:$updates,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   Gopt_ScatterReductionAttr:$reduction);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "scatterElementsShape";
}

def Gopt_ScatterNDOp : Gopt_InferredOp<"scatter_nd", [Pure, Gopt_DataMovement, Gopt_Differentiable]> {
  let summary = "a copy of a tensor with slices replaced at index tuples";
  let description = [{
    ONNX's `ScatterND`: `y` is `x`, then the slice of `y` at each index
    tuple (the last dimension of `indices`, size `k`) becomes the matching
    slice of `updates` (`reduction = "none"`), or is added to, multiplied
    by, or the larger or smaller (`"max"`, `"min"`) of it. `updates` has the shape `indices.shape[:-1] + x.shape[k:]`. With
    `"none"`, a repeated tuple keeps the update that comes last.

    ```mlir
    %y = gopt.scatter_nd %x, %i, %u : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, Gopt_IndexTensor:$indices,
                   Gopt_NumericTensor:$updates,
                   Gopt_ScatterReductionAttr:$reduction);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "scatterNDShape";
}

class Gopt_ArgReduceOp<string mnemonic, string what>
    : Gopt_InferredOp<mnemonic, [Pure]> {
  let notDifferentiable = "an integer (index) result";
  let summary = "index of the " # what # " along an axis";
  let description = "ONNX's `ArgM" # !substr(mnemonic, 5) # [{` and TensorFlow's
    equivalent: the i64 index of the }] # what # [{ of `x` along `axis`
    (negative counts from the end); ties give the first index, or the last
    with `select_last_index`. The axis is dropped unless `keep_dims`.

    ```mlir
    %i = gopt.}] # mnemonic # [{ %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Gopt_I64Tensor:$indices);
  let runtimeShapeFunction = "argReduceShape";
  let resultElementType = "i64";
}
def Gopt_ArgMaxOp : Gopt_ArgReduceOp<"arg_max", "maximum">;
def Gopt_ArgMinOp : Gopt_ArgReduceOp<"arg_min", "minimum">;

def Gopt_CumSumOp : Gopt_InferredOp<"cumsum", [Pure, SameOperandsAndResultElementType, Gopt_Differentiable]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    ONNX's `CumSum` and TensorFlow's `Cumsum`: `y[..., i, ...]` is the sum of
    `x[..., j, ...]` for `j <= i` along `axis` (negative counts from the
    end); `exclusive` leaves out `j = i`, `reverse` sums from the end
    (`j >= i`). Its gradient is the cumsum of dy the other way (`reverse`
    flipped, `exclusive` kept).

    ```mlir
    %y = gopt.cumsum %x {axis = 1 : i64, exclusive = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "cumSumShape";
}

def Gopt_TopKOp : Gopt_InferredOp<"top_k", [Pure, Gopt_Differentiable]> {
  let summary = "the k largest (or smallest) elements along an axis";
  let description = [{
    ONNX's `TopK` and TensorFlow's `TopKV2` with a constant `k`: `values`
    holds the `k` largest elements of each line of `x` along `axis`
    (negative counts from the end), or the smallest with `largest = false`,
    and `indices` their i64 positions. Results are always sorted (best
    first; `sorted = false` allows any order, so sorted is a valid answer);
    of equal elements the lower index comes first.

    ```mlir
    %v, %i = gopt.top_k %x {k = 5 : i64} : (tensor<?x1000xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, I64Attr:$k,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Gopt_NumericTensor:$values, Gopt_I64Tensor:$indices);
  let runtimeShapeFunction = "topKShape";
  let resultElementType = "operand:0, i64";
}

def Gopt_TfIdfModeAttr : Gopt_StrEnumAttr<["TF", "IDF", "TFIDF"], "TF">;

def Gopt_TfIdfVectorizerOp : Gopt_InferredOp<"tf_idf_vectorizer", [Pure]> {
  let notDifferentiable = "integer (token) inputs";
  let summary = "n-gram counts of integer sequences (ONNX TfIdfVectorizer)";
  let description = [{
    Counts, in each row of `x` (`[N]` or `[B, N]`, i32 or i64), the
    n-grams of `pool_int64s` for n in [`min_gram_length`,
    `max_gram_length`]: the n-grams of length n are
    `pool_int64s[ngram_counts[n-1] : ngram_counts[n]]` (to the end for the
    last length), n values each, n-gram k of the pool counting into column
    `ngram_indexes[k]`. An n-gram starting at position i with skip s
    (0 to `max_skip_count`) is `x[i], x[i+s+1], ..., x[i+(n-1)(s+1)]`;
    unigrams count once, whatever the skip. `mode` `TF` gives the counts,
    `IDF` `weights[k]` where n-gram k occurs (1 without weights), `TFIDF`
    the count times `weights[k]`. Result f32 `[C]` or `[B, C]`,
    `C = max(ngram_indexes) + 1`.

    ```mlir
    %y = gopt.tf_idf_vectorizer %x {min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 0 : i64, mode = "TF", ngram_counts = array<i64: 0, 4>, ngram_indexes = array<i64: 0, 1, 2, 3, 4, 5, 6>, pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>} : (tensor<12xi64>) -> tensor<7xf32>
    ```
  }];
  let arguments = (ins Gopt_IndexTensor:$x, Gopt_TfIdfModeAttr:$mode,
                   I64Attr:$min_gram_length, I64Attr:$max_gram_length,
                   DefaultValuedAttr<I64Attr, "0">:$max_skip_count,
                   DenseI64ArrayAttr:$ngram_counts,
                   DenseI64ArrayAttr:$ngram_indexes,
                   DenseI64ArrayAttr:$pool_int64s,
                   OptionalAttr<DenseF32ArrayAttr>:$weights);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "tfIdfVectorizerShape";
  let resultElementType = "f32";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTINDEXINGOPS_TD
