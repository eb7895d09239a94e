// RUN: gopt-opt %s -split-input-file -verify-each --gopt-mixed-precision | FileCheck %s

/// A comparison (clear list) takes its float operands in bf16; its i1
/// result stays i1. where (clear) follows its bf16 branches; softmax (deny)
/// gets one cast back to f32.
// CHECK-LABEL: func @compare_where
// CHECK: %[[R:.*]] = gopt.relu %{{.*}} : (tensor<1x4xbf16>) -> tensor<1x4xbf16>
// CHECK: %[[M:.*]] = gopt.greater %[[R]], %{{.*}} : (tensor<1x4xbf16>, tensor<bf16>) -> tensor<1x4xi1>
// CHECK: %[[W:.*]] = gopt.where %[[M]], %[[R]], %{{.*}} : (tensor<1x4xi1>, tensor<1x4xbf16>, tensor<bf16>) -> tensor<1x4xbf16>
// CHECK: %[[F:.*]] = gopt.cast %[[W]] : (tensor<1x4xbf16>) -> tensor<1x4xf32>
// CHECK: gopt.softmax %[[F]]
func.func @compare_where(%x: tensor<1x3xf32>) -> tensor<1x4xf32> {
  %w = gopt.constant dense<0.5> : tensor<3x4xf32>
  %half = gopt.constant dense<0.5> : tensor<f32>
  %m = gopt.matmul %x, %w : (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
  %r = gopt.relu %m : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = gopt.greater %r, %half : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xi1>
  %s = gopt.where %c, %r, %half : (tensor<1x4xi1>, tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %y = gopt.softmax %s : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

/// A comparison of f32 values from a deny-list op stays f32.
// CHECK-LABEL: func @compare_f32
// CHECK: gopt.less %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
func.func @compare_f32(%a: tensor<4xf32>) -> tensor<4xi1> {
  %s = gopt.softmax %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = gopt.less %s, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %c : tensor<4xi1>
}
