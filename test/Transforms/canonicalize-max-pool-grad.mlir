// RUN: gopt-opt %s -canonicalize -split-input-file | FileCheck %s
// The values are checked by test/Runtime/max-pool-grad-rewrites.test.

/// relu before a max pool: the relu gradient masks the pooled gradient by
/// the pooled value instead of the full-size one by relu's output, and the
/// bias gradient sums the pooled gradient.
// CHECK-LABEL: func.func @relu_pool
// CHECK-SAME: (%[[Y:.*]]: tensor<2x6x6x3xf32>, %[[G:.*]]: tensor<2x3x3x3xf32>)
// CHECK: %[[P:.*]] = gopt.max_pool %[[Y]]
// CHECK: %[[M:.*]] = gopt.relu_grad %[[G]], %[[P]] : (tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>)
// CHECK: %[[DX:.*]] = gopt.max_pool_grad %[[Y]], %[[M]]
// CHECK: %[[B:.*]] = gopt.reduce_sum %[[M]] {axes = array<i64: 0, 1, 2>
// CHECK: return %[[P]], %[[DX]], %[[B]]
func.func @relu_pool(%y: tensor<2x6x6x3xf32>, %g: tensor<2x3x3x3xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x6x6x3xf32>, tensor<3xf32>) {
  %p = gopt.max_pool %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NHWC"} : (tensor<2x6x6x3xf32>) -> tensor<2x3x3x3xf32>
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NHWC"} : (tensor<2x6x6x3xf32>, tensor<2x3x3x3xf32>) -> tensor<2x6x6x3xf32>
  %dx = gopt.relu_grad %d, %y : (tensor<2x6x6x3xf32>, tensor<2x6x6x3xf32>) -> tensor<2x6x6x3xf32>
  %b = gopt.reduce_sum %dx {axes = array<i64: 0, 1, 2>} : (tensor<2x6x6x3xf32>) -> tensor<3xf32>
  return %p, %dx, %b : tensor<2x3x3x3xf32>, tensor<2x6x6x3xf32>, tensor<3xf32>
}

// -----

/// Overlapping windows with padding (ResNet's stem pool), NCHW.
// CHECK-LABEL: func.func @overlapping
// CHECK: %[[P:.*]] = gopt.max_pool %arg0
// CHECK: %[[M:.*]] = gopt.relu_grad %arg1, %[[P]]
// CHECK: gopt.max_pool_grad %arg0, %[[M]]
// CHECK: gopt.reduce_sum %[[M]] {axes = array<i64: 0, 2, 3>
func.func @overlapping(%y: tensor<2x3x7x7xf32>, %g: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x7x7xf32>, tensor<3xf32>) {
  %p = gopt.max_pool %y {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"} : (tensor<2x3x7x7xf32>) -> tensor<2x3x4x4xf32>
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"} : (tensor<2x3x7x7xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x7x7xf32>
  %dx = gopt.relu_grad %d, %y : (tensor<2x3x7x7xf32>, tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32>
  %b = gopt.reduce_sum %dx {axes = array<i64: 0, 2, 3>} : (tensor<2x3x7x7xf32>) -> tensor<3xf32>
  return %p, %dx, %b : tensor<2x3x4x4xf32>, tensor<2x3x7x7xf32>, tensor<3xf32>
}

// -----

/// Left alone: the pool's windows differ from the gradient's (strides), the
/// reduction keeps a spatial axis, and a window (pads 2 on a 2x2 kernel)
/// lies entirely in padding.
// CHECK-LABEL: func.func @mismatch
// CHECK: %[[D:.*]] = gopt.max_pool_grad %arg0, %arg1
// CHECK: gopt.relu_grad %[[D]], %arg0
// CHECK-LABEL: func.func @partial_sum
// CHECK: %[[D:.*]] = gopt.max_pool_grad
// CHECK: gopt.reduce_sum %[[D]]
// CHECK-LABEL: func.func @padding_window
// CHECK: %[[D:.*]] = gopt.max_pool_grad
// CHECK: gopt.reduce_sum %[[D]]
func.func @mismatch(%y: tensor<1x1x4x4xf32>, %g: tensor<1x1x2x2xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x4x4xf32>) {
  %p = gopt.max_pool %y {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, data_format = "NCHW"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NCHW"} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %dx = gopt.relu_grad %d, %y : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %p, %dx : tensor<1x1x3x3xf32>, tensor<1x1x4x4xf32>
}
func.func @partial_sum(%y: tensor<1x2x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<2x4xf32> {
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %b = gopt.reduce_sum %d {axes = array<i64: 0, 3>} : (tensor<1x2x4x4xf32>) -> tensor<2x4xf32>
  return %b : tensor<2x4xf32>
}
func.func @padding_window(%y: tensor<1x2x4x4xf32>, %g: tensor<1x2x4x4xf32>) -> tensor<2xf32> {
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = gopt.reduce_sum %d {axes = array<i64: 0, 2, 3>} : (tensor<1x2x4x4xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>
}
