// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -canonicalize -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-4
// RUN: gopt-run %s --compare %t.mlir --compare-backend cpu --atol 1e-5 --rtol 1e-4

/// Layer norms written out as PyTorch (before opset 17) and TensorFlow
/// write them become layer_norm ops (test/Dialect/Gopt/
/// canonicalize-layer-norm.mlir has the forms) computing the same values,
/// on the reference kernels and on the cpu backend's fast kernel.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-2: gopt.layer_norm
// CHECK-NOT: gopt.reduce_mean
func.func @main(%x: tensor<3x5x64xf32>) -> (tensor<3x5x64xf32>, tensor<3x5x64xf32>) {
  %two = gopt.constant dense<2.0> : tensor<f32>
  %eps = gopt.constant dense<1.0e-5> : tensor<f32>
  %gamma = gopt.constant dense<1.5> : tensor<64xf32>
  %beta = gopt.constant dense<-0.25> : tensor<64xf32>
  %mean = gopt.reduce_mean %x {axes = array<i64: -1>, keep_dims = true} : (tensor<3x5x64xf32>) -> tensor<3x5x1xf32>
  %d = gopt.sub %x, %mean : (tensor<3x5x64xf32>, tensor<3x5x1xf32>) -> tensor<3x5x64xf32>
  %sq = gopt.pow %d, %two : (tensor<3x5x64xf32>, tensor<f32>) -> tensor<3x5x64xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: -1>, keep_dims = true} : (tensor<3x5x64xf32>) -> tensor<3x5x1xf32>
  %shifted = gopt.add %var, %eps : (tensor<3x5x1xf32>, tensor<f32>) -> tensor<3x5x1xf32>
  %std = gopt.sqrt %shifted : (tensor<3x5x1xf32>) -> tensor<3x5x1xf32>
  %n = gopt.div %d, %std : (tensor<3x5x64xf32>, tensor<3x5x1xf32>) -> tensor<3x5x64xf32>
  %scaled = gopt.mul %n, %gamma : (tensor<3x5x64xf32>, tensor<64xf32>) -> tensor<3x5x64xf32>
  %torch = gopt.add %scaled, %beta : (tensor<3x5x64xf32>, tensor<64xf32>) -> tensor<3x5x64xf32>

  %eps2 = gopt.constant dense<1.0e-3> : tensor<1xf32>
  %mean2 = gopt.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<3x5x64xf32>) -> tensor<3x1x1xf32>
  %sqd = gopt.squared_difference %x, %mean2 : (tensor<3x5x64xf32>, tensor<3x1x1xf32>) -> tensor<3x5x64xf32>
  %var2 = gopt.reduce_mean %sqd {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<3x5x64xf32>) -> tensor<3x1x1xf32>
  %d2 = gopt.sub %x, %mean2 : (tensor<3x5x64xf32>, tensor<3x1x1xf32>) -> tensor<3x5x64xf32>
  %shifted2 = gopt.add %eps2, %var2 : (tensor<1xf32>, tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %inv = gopt.rsqrt %shifted2 : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %tf = gopt.mul %inv, %d2 : (tensor<3x1x1xf32>, tensor<3x5x64xf32>) -> tensor<3x5x64xf32>
  return %torch, %tf : tensor<3x5x64xf32>, tensor<3x5x64xf32>
}
