// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s

/// The normalization ops parse, print and re-parse, keeping their
/// attributes; result types follow from the operands.

// CHECK-LABEL: func @layer_norm
func.func @layer_norm(%x: tensor<?x16x64xf32>, %g: tensor<64xf32>, %b: tensor<f32>) -> tensor<?x16x64xf32> {
  // CHECK: gopt.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32} : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  // The default axis (-1) prints as no attribute.
  %y = gopt.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-6 : f32} : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  return %y : tensor<?x16x64xf32>
}

// CHECK-LABEL: func @layer_norm_two_axes
func.func @layer_norm_two_axes(%x: tensor<2x3x4x5xbf16>, %g: tensor<4x5xbf16>) -> tensor<2x3x4x5xbf16> {
  // CHECK: gopt.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64}
  %y = gopt.layer_norm %x, %g, %g {axis = 2 : i64} : (tensor<2x3x4x5xbf16>, tensor<4x5xbf16>, tensor<4x5xbf16>) -> tensor<2x3x4x5xbf16>
  return %y : tensor<2x3x4x5xbf16>
}

// CHECK-LABEL: func @instance_norm
func.func @instance_norm(%x: tensor<?x8x5x5xf32>, %s: tensor<8xf32>, %x3: tensor<2x8x7xf32>) -> (tensor<?x8x5x5xf32>, tensor<2x8x7xf32>) {
  // CHECK: gopt.instance_norm %{{.*}}, %{{.*}}, %{{.*}} {data_format = "NCHW", epsilon = 0.00999999977 : f32}
  %y = gopt.instance_norm %x, %s, %s {data_format = "NCHW", epsilon = 0.01 : f32} : (tensor<?x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x5x5xf32>
  // Ranks other than 4 keep channels at axis 1.
  // CHECK: gopt.instance_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x7xf32>
  %z = gopt.instance_norm %x3, %s, %s : (tensor<2x8x7xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x7xf32>
  return %y, %z : tensor<?x8x5x5xf32>, tensor<2x8x7xf32>
}

// CHECK-LABEL: func @lrn
func.func @lrn(%x: tensor<1x5x5x16xf32>) -> tensor<1x5x5x16xf32> {
  // CHECK: gopt.lrn %{{.*}} {size = 3 : i64} : (tensor<1x5x5x16xf32>) -> tensor<1x5x5x16xf32>
  %y = gopt.lrn %x {size = 3 : i64} : (tensor<1x5x5x16xf32>) -> tensor<1x5x5x16xf32>
  return %y : tensor<1x5x5x16xf32>
}
