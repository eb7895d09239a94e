// RUN: gopt-opt %s -split-input-file | FileCheck %s
// RUN: gopt-opt %s -split-input-file -mlir-print-op-generic | gopt-opt -split-input-file | FileCheck %s

/// The ops of ONNX opsets 18-20 (bitwise_*, col2im, deform_conv2d and its
/// gradient) round trip with their inferred types;
/// new-ops-18-20-invalid.mlir has the refusals.

// CHECK-LABEL: func @bitwise
func.func @bitwise(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %u: tensor<4xui8>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>) {
  // CHECK: gopt.bitwise_and %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %0 = gopt.bitwise_and %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: gopt.bitwise_or
  %1 = gopt.bitwise_or %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: gopt.bitwise_xor
  %2 = gopt.bitwise_xor %b, %a : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: gopt.bitwise_not %{{.*}} : (tensor<4xui8>) -> tensor<4xui8>
  %3 = gopt.bitwise_not %u : (tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>
}

// -----

// CHECK-LABEL: func @col2im
func.func @col2im(%x: tensor<?x12x16xf32>) -> tensor<?x3x5x5xf32> {
  // CHECK: gopt.col2im %{{.*}} {{.*}} : (tensor<?x12x16xf32>) -> tensor<?x3x5x5xf32>
  %y = gopt.col2im %x {image_shape = array<i64: 5, 5>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x12x16xf32>) -> tensor<?x3x5x5xf32>
  return %y : tensor<?x3x5x5xf32>
}

// -----

// CHECK-LABEL: func @deform_conv2d
func.func @deform_conv2d(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %o: tensor<1x36x8x8xf32>, %b: tensor<6xf32>, %m: tensor<1x18x8x8xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x6x8x8xf32>) {
  // CHECK: gopt.deform_conv2d %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}} -> tensor<1x6x8x8xf32>
  %0 = gopt.deform_conv2d %x, %w, %o, %b, %m {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<6xf32>, tensor<1x18x8x8xf32>) -> tensor<1x6x8x8xf32>
  %1 = gopt.deform_conv2d %x, %w, %o, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  return %0, %1 : tensor<1x6x8x8xf32>, tensor<1x6x8x8xf32>
}

// -----

/// deform_conv2d's gradient: dx, dfilter, doffset of their operands' types,
/// dmask the mask's, or without one offset's with one channel per tap.
// CHECK-LABEL: func @deform_conv2d_grad
func.func @deform_conv2d_grad(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %o: tensor<1x36x8x8xf32>, %dy: tensor<1x6x8x8xf32>, %m: tensor<1x18x8x8xf32>) -> (tensor<1x18x8x8xf32>, tensor<1x18x8x8xf32>) {
  // CHECK: gopt.deform_conv2d_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}} -> (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x18x8x8xf32>)
  %0:4 = gopt.deform_conv2d_grad %x, %w, %o, %dy, %m {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x6x8x8xf32>, tensor<1x18x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x18x8x8xf32>)
  // CHECK: gopt.deform_conv2d_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}} -> (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x18x8x8xf32>)
  %1:4 = gopt.deform_conv2d_grad %x, %w, %o, %dy {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x6x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<1x36x8x8xf32>, tensor<1x18x8x8xf32>)
  return %0#3, %1#3 : tensor<1x18x8x8xf32>, tensor<1x18x8x8xf32>
}
