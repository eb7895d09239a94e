// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 0 --rtol 0

/// Without convolutions a layout change moves data only: bit-exact.
func.func @layout_exact(%x: tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32> {
  %m = gopt.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  %r = gopt.relu %m : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  %s = gopt.softmax %r {axis = 3 : i64} : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  return %s : tensor<2x7x7x4xf32>
}
