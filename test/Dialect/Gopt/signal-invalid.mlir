// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the sampling ops (GoptSamplingOps.td) and
/// the signal ops (GoptSignalOps.td).

func.func @grid_sample_mode(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) {
  // expected-error@+1 {{'gopt.grid_sample' op expects mode "bilinear", "nearest" or "bicubic", got "linear"}}
  %y = gopt.grid_sample %x, %g {mode = "linear"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @grid_sample_grid(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x3xf32>) {
  // expected-error@+1 {{'gopt.grid_sample' op expects grid of shape [N, D1_out, ..., Dr_out, 2] for x [1, 1, 4, 4], got [1, 2, 2, 3]}}
  %y = gopt.grid_sample %x, %g : (tensor<1x1x4x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @grid_sample_align(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) {
  // expected-error@+1 {{'gopt.grid_sample' op expects align_corners 0 or 1, got 2}}
  %y = gopt.grid_sample %x, %g {align_corners = 2 : i64} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @roi_align_rois(%x: tensor<1x1x8x8xf32>, %r: tensor<3x5xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'gopt.roi_align' op expects rois of shape [R, 4], got [3, 5]}}
  %y = gopt.roi_align %x, %r, %b : (tensor<1x1x8x8xf32>, tensor<3x5xf32>, tensor<3xi64>) -> tensor<3x1x1x1xf32>
  return
}

// -----

func.func @roi_align_batch(%x: tensor<1x1x8x8xf32>, %r: tensor<3x4xf32>, %b: tensor<2xi64>) {
  // expected-error@+1 {{'gopt.roi_align' op expects batch_indices of shape [R] (R = 3 rois), got [2]}}
  %y = gopt.roi_align %x, %r, %b : (tensor<1x1x8x8xf32>, tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x1x1xf32>
  return
}

// -----

func.func @roi_align_ctm(%x: tensor<1x1x8x8xf32>, %r: tensor<3x4xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'gopt.roi_align' op expects coordinate_transformation_mode "half_pixel" or "output_half_pixel", got "asymmetric"}}
  %y = gopt.roi_align %x, %r, %b {coordinate_transformation_mode = "asymmetric"} : (tensor<1x1x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x1x1x1xf32>
  return
}

// -----

func.func @max_pool_with_indices_storage(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{'gopt.max_pool_with_indices' op expects storage_order 0 or 1, got 2}}
  %y, %i = gopt.max_pool_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, storage_order = 2 : i64} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return
}

// -----

func.func @max_pool_with_indices_pads(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{'gopt.max_pool_with_indices' op expects pads of 4 entries, got [0, 0]}}
  %y, %i = gopt.max_pool_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return
}

// -----

func.func @max_unpool_indices(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x3xi64>) {
  // expected-error@+1 {{'gopt.max_unpool' op expects indices of x's shape [1, 1, 2, 2], got [1, 1, 2, 3]}}
  %y = gopt.max_unpool %x, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x3xi64>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @max_unpool_output_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) {
  // expected-error@+1 {{'gopt.max_unpool' op expects output_shape of rank 4, got [5, 5]}}
  %y = gopt.max_unpool %x, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, output_shape = array<i64: 5, 5>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32>
  return
}

// -----

func.func @dft_complex_dim(%x: tensor<1x10x3xf32>) {
  // expected-error@+1 {{'gopt.dft' op expects input with a trailing dim of 1 (real) or 2 (complex), got [1, 10, 3]}}
  %y = gopt.dft %x : (tensor<1x10x3xf32>) -> tensor<1x10x2xf32>
  return
}

// -----

func.func @dft_axis(%x: tensor<1x10x1xf32>) {
  // expected-error@+1 {{'gopt.dft' op expects axis in [-3, -2] or [0, 1] (not the trailing complex dim), got 2}}
  %y = gopt.dft %x {axis = 2 : i64} : (tensor<1x10x1xf32>) -> tensor<1x10x2xf32>
  return
}

// -----

func.func @dft_onesided_inverse(%x: tensor<1x10x2xf32>) {
  // expected-error@+1 {{'gopt.dft' op expects onesided = false with inverse = true}}
  %y = gopt.dft %x {inverse = true, onesided = true} : (tensor<1x10x2xf32>) -> tensor<1x6x2xf32>
  return
}

// -----

func.func @stft_window(%x: tensor<1x128x1xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'gopt.stft' op expects window of frame_length 8 entries, got [16]}}
  %y = gopt.stft %x, %w {frame_step = 8 : i64, frame_length = 8 : i64} : (tensor<1x128x1xf32>, tensor<16xf32>) -> tensor<1x16x5x2xf32>
  return
}

// -----

func.func @stft_no_length(%x: tensor<1x128x1xf32>) {
  // expected-error@+1 {{'gopt.stft' op expects a window or frame_length > 0}}
  %y = gopt.stft %x {frame_step = 8 : i64} : (tensor<1x128x1xf32>) -> tensor<1x15x9x2xf32>
  return
}

// -----

func.func @mel_upper_edge() {
  // expected-error@+1 {{'gopt.mel_weight_matrix' op expects upper_edge_hertz <= sample_rate / 2 (8000 / 2), got 5000}}
  %m = gopt.mel_weight_matrix {num_mel_bins = 8 : i64, dft_length = 16 : i64, sample_rate = 8000 : i64, lower_edge_hertz = 0.0 : f32, upper_edge_hertz = 5000.0 : f32} : () -> tensor<9x8xf32>
  return
}

// -----

func.func @det_square(%x: tensor<3x2x3xf32>) {
  // expected-error@+1 {{'gopt.det' op expects x of shape [..., M, M], got [3, 2, 3]}}
  %y = gopt.det %x : (tensor<3x2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matrix_inverse_square(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.matrix_inverse' op expects x of shape [..., M, M], got [2, 3]}}
  %y = gopt.matrix_inverse %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @matrix_inverse_rank(%x: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.matrix_inverse' op expects x of shape [..., M, M], got [3]}}
  %y = gopt.matrix_inverse %x : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

/// A sampling gradient's dy has the forward's result shape.
func.func @grid_sample_grad_dy(%x: tensor<1x4x10x10xf32>, %g: tensor<1x3x5x2xf32>, %dy: tensor<1x4x5x3xf32>) {
  // expected-error@+1 {{'gopt.grid_sample_grad' op expects dy of the forward's result shape [1, 4, 3, 5], got [1, 4, 5, 3]}}
  %dx, %dg = gopt.grid_sample_grad %x, %g, %dy : (tensor<1x4x10x10xf32>, tensor<1x3x5x2xf32>, tensor<1x4x5x3xf32>) -> (tensor<1x4x10x10xf32>, tensor<1x3x5x2xf32>)
  return
}
