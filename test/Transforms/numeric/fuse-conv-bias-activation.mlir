// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-fuse-conv-bias-activation -o %t.mlir
// RUN: gopt-opt %t.mlir | FileCheck %s
// RUN: gopt-run %s --compare %t.mlir --atol 1e-6 --rtol 1e-5

/// conv + bias_add + relu6 and conv + per-channel add + sigmoid, fused.
// CHECK: activation = "relu6"
// CHECK: activation = "sigmoid"
func.func @fuse(%x: tensor<1x2x5x5xf32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) {
  %w = gopt.constant dense<[[[[0.5]], [[-1.0]]], [[[2.0]], [[0.3]]], [[[-0.4]], [[1.5]]]]> : tensor<3x2x1x1xf32>
  %b = gopt.constant dense<[0.1, 3.0, -0.5]> : tensor<3xf32>
  %b2 = gopt.constant dense<[[[0.2]], [[-0.3]], [[0.4]]]> : tensor<3x1x1xf32>
  %c = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %a = gopt.bias_add %c, %b {data_format = "NCHW"} : (tensor<1x3x5x5xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %r = gopt.relu6 %a : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %c2 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %a2 = gopt.add %c2, %b2 : (tensor<1x3x5x5xf32>, tensor<3x1x1xf32>) -> tensor<1x3x5x5xf32>
  %s = gopt.sigmoid %a2 : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %r, %s : tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>
}
