// RUN: gopt-opt %s -split-input-file -verify-diagnostics | FileCheck %s

/// Shape inference: one positive case per op family, including dynamic
/// batch dimensions. Declared result types equal to the inferred ones verify;
/// a declared type more static than the inferred one is accepted.

// CHECK-LABEL: func @conv_same_stride2
func.func @conv_same_stride2(%x: tensor<?x225x225x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<?x113x113x8xf32> {
  // TensorFlow's SAME: ceil(225 / 2) = 113.
  // CHECK: -> tensor<?x113x113x8xf32>
  %0 = gopt.conv2d %x, %w {strides = array<i64: 2, 2>, padding = "SAME"} : (tensor<?x225x225x3xf32>, tensor<3x3x3x8xf32>) -> tensor<?x113x113x8xf32>
  return %0 : tensor<?x113x113x8xf32>
}

// -----

// CHECK-LABEL: func @conv_dynamic_spatial
func.func @conv_dynamic_spatial(%x: tensor<1x3x?x?xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x?x?xf32> {
  // CHECK: -> tensor<1x16x?x?xf32>
  %0 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x3x?x?xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x?x?xf32>
  return %0 : tensor<1x16x?x?xf32>
}

// -----

/// A declared batch of 4 refines the inferred dynamic batch.
// CHECK-LABEL: func @refined_result
func.func @refined_result(%x: tensor<?x8xf32>) -> tensor<4x8xf32> {
  // CHECK: -> tensor<4x8xf32>
  %0 = gopt.relu %x : (tensor<?x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @depthwise
func.func @depthwise(%x: tensor<2x32x16x16xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<2x32x8x8xf32> {
  // CHECK: groups = 32
  %0 = gopt.conv2d %x, %w {groups = 32 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<2x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<2x32x8x8xf32>
  return %0 : tensor<2x32x8x8xf32>
}

// -----

// CHECK-LABEL: func @pools
func.func @pools(%x: tensor<?x64x112x112xf32>) -> (tensor<?x64x56x56xf32>, tensor<?x64x38x38xf32>) {
  // CHECK: gopt.max_pool {{.*}} -> tensor<?x64x56x56xf32>
  %0 = gopt.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"} : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  // ceil((112 - 3) / 3) + 1 = 38 with ceil_mode.
  // CHECK: gopt.avg_pool {{.*}} -> tensor<?x64x38x38xf32>
  %1 = gopt.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 3, 3>, ceil_mode = true, data_format = "NCHW"} : (tensor<?x64x112x112xf32>) -> tensor<?x64x38x38xf32>
  return %0, %1 : tensor<?x64x56x56xf32>, tensor<?x64x38x38xf32>
}

// -----

// CHECK-LABEL: func @batched_matmul
func.func @batched_matmul(%a: tensor<?x1x8x16xf32>, %b: tensor<4x32x16xf32>) -> tensor<?x4x8x32xf32> {
  // CHECK: -> tensor<?x4x8x32xf32>
  %0 = gopt.matmul %a, %b {transpose_b = true} : (tensor<?x1x8x16xf32>, tensor<4x32x16xf32>) -> tensor<?x4x8x32xf32>
  return %0 : tensor<?x4x8x32xf32>
}

// -----

// CHECK-LABEL: func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x1x64xf32>, %b: tensor<10x1xf32>) -> tensor<?x10x64xf32> {
  // CHECK: -> tensor<?x10x64xf32>
  %0 = gopt.squared_difference %a, %b : (tensor<?x1x64xf32>, tensor<10x1xf32>) -> tensor<?x10x64xf32>
  return %0 : tensor<?x10x64xf32>
}

// -----

// CHECK-LABEL: func @reshape_dynamic
func.func @reshape_dynamic(%x: tensor<?x7x7x64xf32>) -> tensor<?x3136xf32> {
  // CHECK: -> tensor<?x3136xf32>
  %0 = gopt.reshape %x {shape = array<i64: -1, 3136>} : (tensor<?x7x7x64xf32>) -> tensor<?x3136xf32>
  return %0 : tensor<?x3136xf32>
}

// -----

// CHECK-LABEL: func @dequantize_dynamic
func.func @dequantize_dynamic(%q: tensor<?x16xi8>, %s: tensor<16xf32>) -> tensor<?x16xf32> {
  // CHECK: -> tensor<?x16xf32>
  %0 = gopt.dequantize %q, %s {axis = 1 : i64} : (tensor<?x16xi8>, tensor<16xf32>) -> tensor<?x16xf32>
  // A declared static batch is accepted (more static than inferred).
  // CHECK: -> tensor<8x16xf32>
  %1 = gopt.dequantize %q, %s {axis = 1 : i64} : (tensor<?x16xi8>, tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// CHECK-LABEL: func @quantize_dynamic
func.func @quantize_dynamic(%x: tensor<?x16xf32>, %s: tensor<1xf32>) -> tensor<?x16xi8> {
  // CHECK: gopt.quantize %{{.*}}, %{{.*}} : (tensor<?x16xf32>, tensor<1xf32>) -> tensor<?x16xi8>
  %0 = gopt.quantize %x, %s : (tensor<?x16xf32>, tensor<1xf32>) -> tensor<?x16xi8>
  return %0 : tensor<?x16xi8>
}
