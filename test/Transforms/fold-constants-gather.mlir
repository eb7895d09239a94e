// RUN: gopt-opt %s --gopt-fold-constants -split-input-file | FileCheck %s

/// gather of constants folds, negative indices counting from the end.
// CHECK-LABEL: func.func @gather
// CHECK: dense<{{\[}}[3.000000e+00, 1.000000e+00], [6.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: gopt.gather
func.func @gather() -> tensor<2x2xf32> {
  %x = gopt.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = gopt.constant dense<[-1, 0]> : tensor<2xi32>
  %y = gopt.gather %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

/// A negative axis counts from the back (it crashed the fold once).
// CHECK-LABEL: func.func @gather_negative_axis
// CHECK: dense<{{\[}}[3.000000e+00, 1.000000e+00], [6.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: gopt.gather
func.func @gather_negative_axis() -> tensor<2x2xf32> {
  %x = gopt.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = gopt.constant dense<[2, 0]> : tensor<2xi64>
  %y = gopt.gather %x, %i {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

/// A static shape chain (Shape -> Gather -> Concat) folds to the target a
/// reshape needs.
// CHECK-LABEL: func.func @shape_chain
// CHECK: gopt.constant dense<[8, -1]> : tensor<2xi64>
// CHECK-NOT: gopt.shape
// CHECK-NOT: gopt.gather
func.func @shape_chain(%x: tensor<8x3x4xf32>) -> tensor<2xi64> {
  %s = gopt.shape %x : (tensor<8x3x4xf32>) -> tensor<3xi64>
  %zero = gopt.constant dense<[0]> : tensor<1xi64>
  %n = gopt.gather %s, %zero : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = gopt.constant dense<[-1]> : tensor<1xi64>
  %t = gopt.concat %n, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %t : tensor<2xi64>
}

// -----

/// An index out of range is left to the runtime, which reports it.
// CHECK-LABEL: func.func @out_of_range
// CHECK: gopt.gather
func.func @out_of_range() -> tensor<1xf32> {
  %x = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = gopt.constant dense<[2]> : tensor<1xi64>
  %y = gopt.gather %x, %i : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %y : tensor<1xf32>
}
