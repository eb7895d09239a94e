// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-fold-constants -o %t.mlir
// RUN: gopt-opt %t.mlir | FileCheck %s
// RUN: gopt-run %s --compare %t.mlir --atol 1e-6 --rtol 1e-6

/// Frozen BN parameter arithmetic and a shape computation folded to
/// constants give the same result as computing them at run time.
// CHECK-NOT: gopt.rsqrt
// CHECK-NOT: gopt.shape
func.func @fold(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %v = gopt.constant dense<[1.5, 0.7, 2.0, 1.0]> : tensor<4xf32>
  %g = gopt.constant dense<[1.1, 0.9, 1.2, 0.8]> : tensor<4xf32>
  %e = gopt.constant dense<1.0e-3> : tensor<f32>
  %ve = gopt.add %v, %e : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = gopt.rsqrt %ve : (tensor<4xf32>) -> tensor<4xf32>
  %s = gopt.mul %r, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = gopt.mul %x, %s : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %t = gopt.transpose %y {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %shape = gopt.shape %t : (tensor<4x2x3xf32>) -> tensor<3xi64>
  %n = gopt.slice %shape {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<1xi64>
  %nf = gopt.cast %n : (tensor<1xi64>) -> tensor<1xf32>
  %z = gopt.mul %t, %nf : (tensor<4x2x3xf32>, tensor<1xf32>) -> tensor<4x2x3xf32>
  %o = gopt.reshape %z {shape = array<i64: 4, 6>} : (tensor<4x2x3xf32>) -> tensor<4x6xf32>
  return %o : tensor<4x6xf32>
}
