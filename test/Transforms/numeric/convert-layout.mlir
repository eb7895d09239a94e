// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-5

/// NHWC -> NCHW on random inputs: conv (filter transposed at compile time),
/// pad, pools, batch_norm, bias_add, a residual add, concat and a reduce head
/// compute the same values (only the summation order of the conv may differ).
func.func @layout(%x: tensor<2x9x9x3xf32>) -> (tensor<2x16xf32>, tensor<2x4x6x8xf32>) {
  %w = gopt.constant dense<[[[[0.1, -0.2, 0.3, 0.05, -0.1, 0.2, 0.15, -0.3], [0.2, 0.1, -0.1, 0.3, 0.05, -0.25, 0.1, 0.2], [-0.3, 0.2, 0.1, -0.05, 0.25, 0.1, -0.2, 0.1]]]]> : tensor<1x1x3x8xf32>
  %b = gopt.constant dense<[0.1, -0.1, 0.2, 0.0, 0.3, -0.2, 0.05, 0.15]> : tensor<8xf32>
  %g = gopt.constant dense<[1.1, 0.9, 1.2, 0.8, 1.0, 1.3, 0.7, 1.05]> : tensor<8xf32>
  %v = gopt.constant dense<[0.5, 1.5, 2.0, 0.7, 1.0, 0.9, 1.2, 0.6]> : tensor<8xf32>
  %p = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 2, 0, 0>} : (tensor<2x9x9x3xf32>) -> tensor<2x11x11x3xf32>
  %c = gopt.conv2d %p, %w {strides = array<i64: 2, 2>, padding = "SAME"} : (tensor<2x11x11x3xf32>, tensor<1x1x3x8xf32>) -> tensor<2x6x6x8xf32>
  %ba = gopt.bias_add %c, %b : (tensor<2x6x6x8xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
  %bn = gopt.batch_norm %ba, %g, %b, %b, %v : (tensor<2x6x6x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
  %r = gopt.relu %bn : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  %m = gopt.max_pool %r {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  %a = gopt.avg_pool %r {kernel = array<i64: 3, 1>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>} : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  %s = gopt.add %m, %a : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
  %k = gopt.mul %s, %g : (tensor<2x6x6x8xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
  %cat = gopt.concat %k, %r {axis = 3 : i64} : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x16xf32>
  %h = gopt.reduce_mean %cat {axes = array<i64: 1, 2>} : (tensor<2x6x6x16xf32>) -> tensor<2x16xf32>
  %sl = gopt.slice %s {starts = array<i64: 0, 1, 0, 0>, ends = array<i64: 2, 5, 6, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x8xf32>) -> tensor<2x4x6x8xf32>
  return %h, %sl : tensor<2x16xf32>, tensor<2x4x6x8xf32>
}
