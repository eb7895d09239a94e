//===- GoptSignalOps.td - spectral transforms and det -------*- tablegen -*-===//
//
// Numeric transforms whose reference computes in double precision: the
// discrete Fourier transform (ONNX DFT), the short-time Fourier transform
// (ONNX STFT), the mel filter bank (ONNX MelWeightMatrix), the
// determinant of square matrices (ONNX Det) and their inverse. Complex values are a trailing
// dimension of 2 (real, imaginary), real ones a trailing dimension of 1, as
// ONNX has them. Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTSIGNALOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTSIGNALOPS_TD

def Gopt_DftOp : Gopt_InferredOp<"dft", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "discrete Fourier transform along one axis (ONNX DFT)";
  let description = [{
    `input` is `[..., 1]` (real) or `[..., 2]` (complex); the transform runs
    along `axis` (negative counts from the back; never the last dim) over
    `dft_length` samples (0: the axis's size; a shorter signal is padded
    with zeros, a longer one truncated): `X[k] = sum_n x[n] exp(-2 pi i k n
    / L)`, or with `inverse` `(1 / L) sum_n x[n] exp(2 pi i k n / L)`.
    `onesided` keeps bins `0 .. L / 2` (not with `inverse`). The result is
    complex (`[..., 2]`) with the axis's size `L` or `L / 2 + 1`.

    ```mlir
    %y = gopt.dft %x {axis = 1 : i64} : (tensor<1x10x10x1xf32>) -> tensor<1x10x10x2xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input,
                   DefaultValuedAttr<I64Attr, "1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$inverse,
                   DefaultValuedAttr<BoolAttr, "false">:$onesided,
                   DefaultValuedAttr<I64Attr, "0">:$dft_length);
  let results = (outs Gopt_FloatTensor:$output);
  let runtimeShapeFunction = "dftShape";
}

def Gopt_StftOp : Gopt_InferredOp<"stft", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "short-time Fourier transform (ONNX STFT)";
  let description = [{
    `signal` `[batch, length, 1 or 2]` (real or complex) is cut into frames
    of `frame_length` samples (0: the window's length) that start
    `frame_step` apart; each frame, multiplied by `window` (`[frame_length]`;
    absent: ones), goes through the DFT of its length. The result is
    `[batch, frames, bins, 2]` with `frames = (length - frame_length) /
    frame_step + 1` and `bins = frame_length / 2 + 1` when `onesided` (real
    signals only), else `frame_length`.

    ```mlir
    %y = gopt.stft %x, %w {frame_step = 8 : i64} : (tensor<1x128x1xf32>, tensor<16xf32>) -> tensor<1x15x9x2xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$signal,
                   Optional<Gopt_FloatTensor>:$window,
                   I64Attr:$frame_step,
                   DefaultValuedAttr<I64Attr, "0">:$frame_length,
                   DefaultValuedAttr<BoolAttr, "true">:$onesided);
  let results = (outs Gopt_FloatTensor:$output);
  let runtimeShapeFunction = "stftShape";
}

def Gopt_MelWeightMatrixOp
    : Gopt_InferredOp<"mel_weight_matrix", [Pure]> {
  let notDifferentiable = "a constant filterbank of its integer sizes and scalar frequencies";
  let summary = "triangular mel filter bank (ONNX MelWeightMatrix)";
  let description = [{
    The `[dft_length / 2 + 1, num_mel_bins]` matrix that maps a onesided
    magnitude spectrum of a `dft_length`-point DFT at `sample_rate` to
    `num_mel_bins` mel bands between `lower_edge_hertz` and
    `upper_edge_hertz`: ONNX's definition (mel = 2595 log10(1 + f / 700),
    `num_mel_bins + 2` band edges placed `(high - low) / (num_mel_bins + 2)`
    mel apart, each edge's spectrogram bin `floor((dft_length + 1) * f /
    sample_rate)`, triangles rising from the left edge's bin to the
    centre's and falling to the right edge's). An f32 result.

    ```mlir
    %m = gopt.mel_weight_matrix {num_mel_bins = 8 : i64, dft_length = 16 : i64, sample_rate = 8192 : i64, lower_edge_hertz = 0.0 : f32, upper_edge_hertz = 4096.0 : f32}
        : () -> tensor<9x8xf32>
    ```
  }];
  let arguments = (ins I64Attr:$num_mel_bins, I64Attr:$dft_length,
                   I64Attr:$sample_rate, F32Attr:$lower_edge_hertz,
                   F32Attr:$upper_edge_hertz);
  let results = (outs F32Tensor:$output);
  let resultElementType = "f32";
  let runtimeShapeFunction = "melWeightMatrixShape";
}

def Gopt_DetOp : Gopt_InferredOp<"det", [Pure, SameOperandsAndResultElementType, Gopt_Differentiable]> {
  let summary = "determinant of square matrices (ONNX Det)";
  let description = [{
    The determinant of each `[M, M]` matrix in the last two dims of `x`
    (`[..., M, M]`), by LU decomposition with partial pivoting in double
    precision. The result has `x`'s leading dims (rank 0 for a single
    matrix).

    ```mlir
    %d = gopt.det %x : (tensor<3x2x2xf32>) -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "detShape";
  let onnxOpType = "Det";
  let onnxSinceOpset = 11;
}

def Gopt_MatrixInverseOp : Gopt_InferredOp<"matrix_inverse", [Pure, SameOperandsAndResultElementType, Gopt_Differentiable]> {
  let summary = "inverse of square matrices";
  let description = [{
    The inverse of each `[M, M]` matrix in the last two dims of `x`
    (`[..., M, M]`), by Gauss-Jordan elimination with partial pivoting in
    double precision; a singular matrix is an error naming the op and the
    matrix. The result has `x`'s shape. det's gradient uses it (`det(x) *
    inverse(x)^T`); ONNX has no such op in its standard domain, so the
    importers and the exporter do not map it.

    ```mlir
    %y = gopt.matrix_inverse %x : (tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "matrixInverseShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTSIGNALOPS_TD
