// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-fuse-batch-norm -o %t.mlir
// RUN: gopt-opt %t.mlir | FileCheck %s
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-4

/// TF's unfused training BN (batch moments) and the exporters' inference
/// form, fused, compute the same outputs on random inputs.
// CHECK-COUNT-2: gopt.batch_norm
func.func @bn(%x: tensor<4x5x5x6xf32>, %y: tensor<2x6x3x3xf32>) -> (tensor<4x5x5x6xf32>, tensor<2x6x3x3xf32>) {
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %gamma = gopt.constant dense<[1.1, 0.9, 1.2, 0.8, 1.0, 1.3]> : tensor<6xf32>
  %beta = gopt.constant dense<[0.1, -0.1, 0.2, 0.0, 0.3, -0.2]> : tensor<6xf32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<4x5x5x6xf32>) -> tensor<1x1x1x6xf32>
  %sq = gopt.squared_difference %x, %mean : (tensor<4x5x5x6xf32>, tensor<1x1x1x6xf32>) -> tensor<4x5x5x6xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<4x5x5x6xf32>) -> tensor<1x1x1x6xf32>
  %ve = gopt.add %var, %eps : (tensor<1x1x1x6xf32>, tensor<f32>) -> tensor<1x1x1x6xf32>
  %r = gopt.rsqrt %ve : (tensor<1x1x1x6xf32>) -> tensor<1x1x1x6xf32>
  %inv = gopt.mul %r, %gamma : (tensor<1x1x1x6xf32>, tensor<6xf32>) -> tensor<1x1x1x6xf32>
  %xs = gopt.mul %x, %inv : (tensor<4x5x5x6xf32>, tensor<1x1x1x6xf32>) -> tensor<4x5x5x6xf32>
  %mi = gopt.mul %mean, %inv : (tensor<1x1x1x6xf32>, tensor<1x1x1x6xf32>) -> tensor<1x1x1x6xf32>
  %sh = gopt.sub %beta, %mi : (tensor<6xf32>, tensor<1x1x1x6xf32>) -> tensor<1x1x1x6xf32>
  %o1 = gopt.add %xs, %sh : (tensor<4x5x5x6xf32>, tensor<1x1x1x6xf32>) -> tensor<4x5x5x6xf32>

  %m2 = gopt.constant dense<[[[0.5]], [[-0.2]], [[0.1]], [[0.0]], [[0.3]], [[-0.4]]]> : tensor<6x1x1xf32>
  %v2 = gopt.constant dense<[[[1.5]], [[0.7]], [[2.0]], [[1.0]], [[0.4]], [[0.9]]]> : tensor<6x1x1xf32>
  %g2 = gopt.reshape %gamma {shape = array<i64: 6, 1, 1>} : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %b2 = gopt.reshape %beta {shape = array<i64: 6, 1, 1>} : (tensor<6xf32>) -> tensor<6x1x1xf32>
  %eps2 = gopt.constant dense<1.0e-5> : tensor<f32>
  %c = gopt.sub %y, %m2 : (tensor<2x6x3x3xf32>, tensor<6x1x1xf32>) -> tensor<2x6x3x3xf32>
  %ve2 = gopt.add %v2, %eps2 : (tensor<6x1x1xf32>, tensor<f32>) -> tensor<6x1x1xf32>
  %r2 = gopt.rsqrt %ve2 : (tensor<6x1x1xf32>) -> tensor<6x1x1xf32>
  %s2 = gopt.mul %g2, %r2 : (tensor<6x1x1xf32>, tensor<6x1x1xf32>) -> tensor<6x1x1xf32>
  %n2 = gopt.mul %c, %s2 : (tensor<2x6x3x3xf32>, tensor<6x1x1xf32>) -> tensor<2x6x3x3xf32>
  %o2 = gopt.add %n2, %b2 : (tensor<2x6x3x3xf32>, tensor<6x1x1xf32>) -> tensor<2x6x3x3xf32>
  return %o1, %o2 : tensor<4x5x5x6xf32>, tensor<2x6x3x3xf32>
}
