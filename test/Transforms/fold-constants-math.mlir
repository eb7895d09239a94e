// RUN: gopt-opt %s --gopt-fold-constants -split-input-file | FileCheck %s

/// The math family folds with the runtime kernels' own scalar functions
/// (generated from GoptMathOps.td): halves round to even, attributes apply.
// CHECK-LABEL: func.func @round_floor_sign
// CHECK-DAG: dense<[0.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00, -2.000000e+00]>
// CHECK-DAG: dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, -1.000000e+00, -2.000000e+00]>
// CHECK-DAG: dense<[1.000000e+00, 1.000000e+00, 1.000000e+00, -1.000000e+00, -1.000000e+00]>
// CHECK-NOT: gopt.round
// CHECK-NOT: gopt.floor
// CHECK-NOT: gopt.sign
func.func @round_floor_sign() -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %c = gopt.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5]> : tensor<5xf32>
  %r = gopt.round %c : (tensor<5xf32>) -> tensor<5xf32>
  %f = gopt.floor %c : (tensor<5xf32>) -> tensor<5xf32>
  %s = gopt.sign %c : (tensor<5xf32>) -> tensor<5xf32>
  return %r, %f, %s : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @attributes
// CHECK-DAG: dense<[0.000000e+00, 5.000000e-01, 8.000000e-01, 1.000000e+00]>
// CHECK-DAG: dense<[0.000000e+00, 0.000000e+00, 3.000000e+00]>
// CHECK-DAG: dense<[-1.500000e+00, 4.000000e+00]>
func.func @attributes() -> (tensor<4xf32>, tensor<3xf32>, tensor<2xf32>) {
  %c = gopt.constant dense<[-5.0, 0.0, 1.5, 10.0]> : tensor<4xf32>
  %h = gopt.hard_sigmoid %c {alpha = 0.2 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %t = gopt.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = gopt.thresholded_relu %t {alpha = 2.0 : f32} : (tensor<3xf32>) -> tensor<3xf32>
  %x = gopt.constant dense<[-3.0, 4.0]> : tensor<2xf32>
  %s = gopt.constant dense<[0.5, 0.5]> : tensor<2xf32>
  %p = gopt.prelu %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %h, %r, %p : tensor<4xf32>, tensor<3xf32>, tensor<2xf32>
}
