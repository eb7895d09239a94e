// RUN: gopt-opt %s -split-input-file | gopt-opt | FileCheck %s

/// The sampling ops (GoptSamplingOps.td) and the signal ops
/// (GoptSignalOps.td) parse, print and round-trip, and infer their result
/// shapes; dynamic dims propagate.

// CHECK-LABEL: func @grid_sample
func.func @grid_sample(%x: tensor<?x3x8x8xf32>, %g: tensor<?x5x6x2xf32>) -> tensor<?x3x5x6xf32> {
  // CHECK: gopt.grid_sample %{{.*}}, %{{.*}} {align_corners = 1 : i64, mode = "bicubic", padding_mode = "reflection"} : (tensor<?x3x8x8xf32>, tensor<?x5x6x2xf32>) -> tensor<?x3x5x6xf32>
  %y = gopt.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<?x5x6x2xf32>) -> tensor<?x3x5x6xf32>
  return %y : tensor<?x3x5x6xf32>
}

// -----

// CHECK-LABEL: func @roi_align
func.func @roi_align(%x: tensor<1x4x10x10xf32>, %r: tensor<?x4xf32>, %b: tensor<?xi64>) -> tensor<?x4x5x3xf32> {
  // CHECK: -> tensor<?x4x5x3xf32>
  %y = gopt.roi_align %x, %r, %b {mode = "max", output_height = 5 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, coordinate_transformation_mode = "output_half_pixel"} : (tensor<1x4x10x10xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4x5x3xf32>
  return %y : tensor<?x4x5x3xf32>
}

// -----

// CHECK-LABEL: func @max_pool_with_indices
func.func @max_pool_with_indices(%x: tensor<1x2x5x5xui8>) -> (tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>) {
  // (5 + 2 - 3) / 2 + 1 = 3 per dim.
  // CHECK: -> (tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>)
  %y, %i = gopt.max_pool_with_indices %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, storage_order = 1 : i64} : (tensor<1x2x5x5xui8>) -> (tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>)
  return %y, %i : tensor<1x2x3x3xui8>, tensor<1x2x3x3xi64>
}

// -----

// CHECK-LABEL: func @max_unpool
func.func @max_unpool(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> (tensor<1x1x4x4xf32>, tensor<1x1x5x5xf32>) {
  // CHECK: -> tensor<1x1x4x4xf32>
  %y = gopt.max_unpool %x, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xf32>
  // CHECK: output_shape = array<i64: 1, 1, 5, 5>
  %z = gopt.max_unpool %x, %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, output_shape = array<i64: 1, 1, 5, 5>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32>
  return %y, %z : tensor<1x1x4x4xf32>, tensor<1x1x5x5xf32>
}

// -----

// CHECK-LABEL: func @dft
func.func @dft(%x: tensor<2x10x7x1xf32>) -> (tensor<2x10x4x2xf32>, tensor<2x16x7x2xf32>) {
  // CHECK: -> tensor<2x10x4x2xf32>
  %y = gopt.dft %x {axis = -2 : i64, onesided = true} : (tensor<2x10x7x1xf32>) -> tensor<2x10x4x2xf32>
  // CHECK: -> tensor<2x16x7x2xf32>
  %z = gopt.dft %x {dft_length = 16 : i64} : (tensor<2x10x7x1xf32>) -> tensor<2x16x7x2xf32>
  return %y, %z : tensor<2x10x4x2xf32>, tensor<2x16x7x2xf32>
}

// -----

// CHECK-LABEL: func @stft_and_mel
func.func @stft_and_mel(%x: tensor<1x128x1xf32>, %w: tensor<16xf32>) -> (tensor<1x15x9x2xf32>, tensor<9x8xf32>) {
  // (128 - 16) / 8 + 1 = 15 frames of 16 / 2 + 1 = 9 bins.
  // CHECK: -> tensor<1x15x9x2xf32>
  %y = gopt.stft %x, %w {frame_step = 8 : i64} : (tensor<1x128x1xf32>, tensor<16xf32>) -> tensor<1x15x9x2xf32>
  // CHECK: gopt.mel_weight_matrix {{.*}} : () -> tensor<9x8xf32>
  %m = gopt.mel_weight_matrix {num_mel_bins = 8 : i64, dft_length = 16 : i64, sample_rate = 8192 : i64, lower_edge_hertz = 0.0 : f32, upper_edge_hertz = 4096.0 : f32} : () -> tensor<9x8xf32>
  return %y, %m : tensor<1x15x9x2xf32>, tensor<9x8xf32>
}

// -----

// CHECK-LABEL: func @det
func.func @det(%x: tensor<?x3x3xf32>, %s: tensor<2x2xf32>) -> (tensor<?xf32>, tensor<f32>) {
  // CHECK: -> tensor<?xf32>
  %y = gopt.det %x : (tensor<?x3x3xf32>) -> tensor<?xf32>
  // CHECK: -> tensor<f32>
  %z = gopt.det %s : (tensor<2x2xf32>) -> tensor<f32>
  return %y, %z : tensor<?xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func @matrix_inverse
func.func @matrix_inverse(%x: tensor<?x3x?xf32>, %s: tensor<2x2xf64>) -> (tensor<?x3x3xf32>, tensor<2x2xf64>) {
  // A dynamic dimension of the square pair takes the other's size.
  // CHECK: gopt.matrix_inverse %{{.*}} : (tensor<?x3x?xf32>) -> tensor<?x3x3xf32>
  %y = gopt.matrix_inverse %x : (tensor<?x3x?xf32>) -> tensor<?x3x3xf32>
  // CHECK: -> tensor<2x2xf64>
  %z = gopt.matrix_inverse %s : (tensor<2x2xf64>) -> tensor<2x2xf64>
  return %y, %z : tensor<?x3x3xf32>, tensor<2x2xf64>
}

// -----

/// The sampling gradients take the forward's attributes and give the
/// operands' types.
// CHECK-LABEL: func @sampling_grads
func.func @sampling_grads(%x: tensor<1x4x10x10xf32>, %g: tensor<1x3x?x2xf32>, %dg: tensor<1x4x3x?xf32>, %r: tensor<?x4xf32>, %b: tensor<?xi64>, %dr: tensor<?x4x5x3xf32>) -> (tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>, tensor<1x4x10x10xf32>) {
  // CHECK: gopt.grid_sample_grad {{.*}} : (tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>, tensor<1x4x3x?xf32>) -> (tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>)
  %dx, %dgrid = gopt.grid_sample_grad %x, %g, %dg {mode = "bicubic", padding_mode = "border", align_corners = 1 : i64} : (tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>, tensor<1x4x3x?xf32>) -> (tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>)
  // CHECK: gopt.roi_align_grad {{.*}} : (tensor<1x4x10x10xf32>, tensor<?x4xf32>, tensor<?xi64>, tensor<?x4x5x3xf32>) -> tensor<1x4x10x10xf32>
  %dxr = gopt.roi_align_grad %x, %r, %b, %dr {mode = "max", output_height = 5 : i64, output_width = 3 : i64} : (tensor<1x4x10x10xf32>, tensor<?x4xf32>, tensor<?xi64>, tensor<?x4x5x3xf32>) -> tensor<1x4x10x10xf32>
  return %dx, %dgrid, %dxr : tensor<1x4x10x10xf32>, tensor<1x3x?x2xf32>, tensor<1x4x10x10xf32>
}
