// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fuse-conv-bias-activation | FileCheck %s
// RUN: gopt-opt %s -split-input-file -gopt-fuse-conv-bias-activation=pool-before-conv=false | FileCheck %s --check-prefix=OFF
// test/Runtime/pool-before-conv.mlir compares the numbers.

/// DenseNet's transition: an average pool of a 1x1 conv's result pools the
/// conv's input, and the conv (bias kept) runs on the pooled pixels.
// CHECK-LABEL: func @transition
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x6x6xf32>, %[[W:.*]]: tensor<4x8x1x1xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[P:.*]] = gopt.avg_pool %[[X]] {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x8x6x6xf32>) -> tensor<2x8x3x3xf32>
// CHECK-NEXT: %[[Y:.*]] = gopt.conv2d %[[P]], %[[W]], %[[B]] {{{.*}}} : (tensor<2x8x3x3xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
// CHECK-NEXT: return %[[Y]]
// OFF-LABEL: func @transition
// OFF-NEXT: gopt.conv2d
// OFF-NEXT: gopt.avg_pool
func.func @transition(%x: tensor<2x8x6x6xf32>, %w: tensor<4x8x1x1xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<2x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %p = gopt.avg_pool %c {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>) -> tensor<2x4x3x3xf32>
  return %p : tensor<2x4x3x3xf32>
}

// -----

/// A relu between them does not commute with the pool: unchanged (the relu
/// is fused into the conv).
// CHECK-LABEL: func @relu_between
// CHECK-NEXT: gopt.conv2d {{.*}}activation = "relu"
// CHECK-NEXT: gopt.avg_pool
func.func @relu_between(%x: tensor<1x8x4x4xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %c = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r = gopt.relu %c : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = gopt.avg_pool %r {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  return %p : tensor<1x4x2x2xf32>
}

// -----

/// A 3x3 conv, a padded pool (the conv's bias would be averaged with the
/// padding's zeros) and a 3x3 stride-1 pool over 8 channels in front of a
/// conv to 1 channel (more operations that way) stay as they are.
// CHECK-LABEL: func @not_moved
// CHECK-NEXT: gopt.conv2d
// CHECK-NEXT: gopt.avg_pool
// CHECK-NEXT: gopt.conv2d
// CHECK-NEXT: gopt.avg_pool
// CHECK-NEXT: gopt.conv2d
// CHECK-NEXT: gopt.avg_pool
func.func @not_moved(%x: tensor<1x8x4x4xf32>, %w3: tensor<4x8x3x3xf32>, %w: tensor<4x8x1x1xf32>, %b: tensor<4xf32>, %w1: tensor<1x8x1x1xf32>) -> (tensor<1x4x1x1xf32>, tensor<1x4x3x3xf32>, tensor<1x1x2x2xf32>) {
  %c0 = gopt.conv2d %x, %w3 {data_format = "NCHW", filter_format = "OIHW", padding = "VALID"} : (tensor<1x8x4x4xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x2x2xf32>
  %p0 = gopt.avg_pool %c0 {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x1xf32>
  %c1 = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %p1 = gopt.avg_pool %c1 {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x4x4x4xf32>) -> tensor<1x4x3x3xf32>
  %c2 = gopt.conv2d %x, %w1 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x1x4x4xf32>
  %p2 = gopt.avg_pool %c2 {data_format = "NCHW", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %p0, %p1, %p2 : tensor<1x4x1x1xf32>, tensor<1x4x3x3xf32>, tensor<1x1x2x2xf32>
}
