// RUN: gopt-opt %s -split-input-file | gopt-opt | FileCheck %s

/// The 3-D window ops parse, print and round-trip, and infer their result
/// shapes: windows with strides, dilations, pads, SAME, ceil_mode and
/// groups; dynamic batch and spatial dims propagate.

// CHECK-LABEL: func @conv3d
func.func @conv3d(%x: tensor<?x4x8x9x10xf32>, %w: tensor<6x2x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x4x9x4xf32> {
  // d: (8 + 2 - 3) / 2 + 1 = 4; h: 9 + 2 - 3 + 1 = 9; w, dilated to a
  // window of 5: (10 + 2 - 5) / 2 + 1 = 4.
  // CHECK: gopt.conv3d %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1, 2>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 1, 2>} : (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<?x6x4x9x4xf32>
  %y = gopt.conv3d %x, %w, %b {strides = array<i64: 2, 1, 2>, dilations = array<i64: 1, 1, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, groups = 2 : i64} : (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<?x6x4x9x4xf32>
  return %y : tensor<?x6x4x9x4xf32>
}

// -----

// CHECK-LABEL: func @conv3d_same_dynamic
func.func @conv3d_same_dynamic(%x: tensor<1x3x?x16x?xf32>, %w: tensor<8x3x3x3x3xf32>) -> tensor<1x8x?x8x?xf32> {
  // CHECK: -> tensor<1x8x?x8x?xf32>
  %y = gopt.conv3d %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, padding = "SAME", pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x?x16x?xf32>, tensor<8x3x3x3x3xf32>) -> tensor<1x8x?x8x?xf32>
  return %y : tensor<1x8x?x8x?xf32>
}

// -----

// CHECK-LABEL: func @conv3d_transpose
func.func @conv3d_transpose(%x: tensor<1x4x3x4x5xf32>, %w: tensor<4x3x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x7x8x10xf32> {
  // d: 2 * 2 + 2 - 0 + 1 = 7; h: 3 * 2 + 3 - 1 = 8; w: 4 * 2 + 3 - 1 = 10.
  // CHECK: gopt.conv3d_transpose {{.*}} -> tensor<1x6x7x8x10xf32>
  %y = gopt.conv3d_transpose %x, %w, %b {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 1, 1, 0>, output_padding = array<i64: 1, 0, 0>, groups = 2 : i64} : (tensor<1x4x3x4x5xf32>, tensor<4x3x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x7x8x10xf32>
  return %y : tensor<1x6x7x8x10xf32>
}

// -----

// CHECK-LABEL: func @max_pool3d_dilated_ceil
func.func @max_pool3d_dilated_ceil(%x: tensor<?x2x5x6x7xf32>) -> tensor<?x2x3x4x3xf32> {
  // CHECK: gopt.max_pool3d %{{.*}} {ceil_mode = true, dilations = array<i64: 2, 1, 3>, kernel = array<i64: 2, 3, 2>, pads = array<i64: 1, 0, 1, 1, 0, 1>, strides = array<i64: 2, 2, 2>} : (tensor<?x2x5x6x7xf32>) -> tensor<?x2x3x4x3xf32>
  %y = gopt.max_pool3d %x {kernel = array<i64: 2, 3, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 3>, pads = array<i64: 1, 0, 1, 1, 0, 1>, ceil_mode = true} : (tensor<?x2x5x6x7xf32>) -> tensor<?x2x3x4x3xf32>
  return %y : tensor<?x2x3x4x3xf32>
}

// -----

// CHECK-LABEL: func @avg_pool3d
func.func @avg_pool3d(%x: tensor<2x3x4x?x8xf32>) -> tensor<2x3x2x?x4xf32> {
  // CHECK: gopt.avg_pool3d %{{.*}} {count_include_pad = true, dilations = array<i64: 1, 1, 1>, kernel = array<i64: 2, 2, 2>, padding = "VALID", pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 2, 2>} : (tensor<2x3x4x?x8xf32>) -> tensor<2x3x2x?x4xf32>
  %y = gopt.avg_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, padding = "VALID", pads = array<i64: 0, 0, 0, 0, 0, 0>, count_include_pad = true} : (tensor<2x3x4x?x8xf32>) -> tensor<2x3x2x?x4xf32>
  return %y : tensor<2x3x2x?x4xf32>
}

// -----

/// The gradients take the forward's attributes; conv3d_grad gives input's
/// and filter's types, the pools' gradients x's.
// CHECK-LABEL: func @volume_grads
func.func @volume_grads(%x: tensor<?x4x8x9x10xf32>, %w: tensor<6x2x3x3x3xf32>, %dy: tensor<?x6x4x9x4xf32>, %p: tensor<2x3x4x?x8xf32>, %dp: tensor<2x3x2x?x4xf32>) -> (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<2x3x4x?x8xf32>, tensor<2x3x4x?x8xf32>) {
  // CHECK: gopt.conv3d_grad {{.*}} : (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<?x6x4x9x4xf32>) -> (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>)
  %dx, %dw = gopt.conv3d_grad %x, %w, %dy {strides = array<i64: 2, 1, 2>, dilations = array<i64: 1, 1, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, groups = 2 : i64} : (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<?x6x4x9x4xf32>) -> (tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>)
  // CHECK: gopt.avg_pool3d_grad {{.*}} : (tensor<2x3x4x?x8xf32>, tensor<2x3x2x?x4xf32>) -> tensor<2x3x4x?x8xf32>
  %da = gopt.avg_pool3d_grad %p, %dp {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, padding = "VALID", pads = array<i64: 0, 0, 0, 0, 0, 0>, count_include_pad = true} : (tensor<2x3x4x?x8xf32>, tensor<2x3x2x?x4xf32>) -> tensor<2x3x4x?x8xf32>
  // CHECK: gopt.max_pool3d_grad {{.*}} : (tensor<2x3x4x?x8xf32>, tensor<2x3x2x?x4xf32>) -> tensor<2x3x4x?x8xf32>
  %dm = gopt.max_pool3d_grad %p, %dp {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<2x3x4x?x8xf32>, tensor<2x3x2x?x4xf32>) -> tensor<2x3x4x?x8xf32>
  return %dx, %dw, %da, %dm : tensor<?x4x8x9x10xf32>, tensor<6x2x3x3x3xf32>, tensor<2x3x4x?x8xf32>, tensor<2x3x4x?x8xf32>
}
