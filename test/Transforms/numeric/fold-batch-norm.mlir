// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-fold-batch-norm -o %t.mlir
// RUN: gopt-opt %t.mlir | FileCheck %s
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-4

/// BN folded into a conv (HWIO, NHWC) and a matmul computes the same.
// CHECK-NOT: gopt.batch_norm
func.func @fold(%x: tensor<2x6x6x3xf32>, %a: tensor<3x4xf32>) -> (tensor<2x6x6x4xf32>, tensor<3x4xf32>) {
  %w = gopt.constant dense<[[[[0.1, -0.2, 0.3, 0.05], [-0.1, 0.2, 0.15, -0.3], [0.2, 0.1, -0.1, 0.3]]]]> : tensor<1x1x3x4xf32>
  %scale = gopt.constant dense<[1.1, 0.9, 1.2, 0.8]> : tensor<4xf32>
  %offset = gopt.constant dense<[0.1, -0.1, 0.2, 0.0]> : tensor<4xf32>
  %mean = gopt.constant dense<[0.5, -0.2, 0.1, 0.0]> : tensor<4xf32>
  %var = gopt.constant dense<[1.5, 0.7, 2.0, 1.0]> : tensor<4xf32>
  %c = gopt.conv2d %x, %w : (tensor<2x6x6x3xf32>, tensor<1x1x3x4xf32>) -> tensor<2x6x6x4xf32>
  %y = gopt.batch_norm %c, %scale, %offset, %mean, %var : (tensor<2x6x6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>
  %wm = gopt.constant dense<[[0.3, -0.1, 0.2, 0.5], [0.1, 0.4, -0.3, 0.2], [-0.2, 0.1, 0.1, 0.3], [0.2, 0.2, -0.1, 0.1]]> : tensor<4x4xf32>
  %m = gopt.matmul %a, %wm {transpose_b = true} : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  %z = gopt.batch_norm %m, %scale, %offset, %mean, %var : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y, %z : tensor<2x6x6x4xf32>, tensor<3x4xf32>
}
