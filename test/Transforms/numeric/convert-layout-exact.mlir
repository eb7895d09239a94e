// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 0 --rtol 0

/// Without convolutions a layout change moves data only: bit-exact. The
/// checks make sure it did change: max_pool runs NCHW, the softmax axis
/// follows the channels, and the graph is transposed at its boundary only.
// CHECK-LABEL: func.func @layout_exact
// CHECK-SAME: (%[[X:.*]]: tensor<2x7x7x4xf32>)
// CHECK: %[[T:.*]] = gopt.transpose %[[X]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x7x7x4xf32>) -> tensor<2x4x7x7xf32>
// CHECK: %[[M:.*]] = gopt.max_pool %[[T]] {data_format = "NCHW"{{.*}} -> tensor<2x4x7x7xf32>
// CHECK: %[[R:.*]] = gopt.relu %[[M]] : (tensor<2x4x7x7xf32>)
// CHECK: %[[S:.*]] = gopt.softmax %[[R]] {axis = 1 : i64}
// CHECK: %[[Y:.*]] = gopt.transpose %[[S]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x4x7x7xf32>) -> tensor<2x7x7x4xf32>
// CHECK: return %[[Y]]
func.func @layout_exact(%x: tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32> {
  %m = gopt.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  %r = gopt.relu %m : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  %s = gopt.softmax %r {axis = 3 : i64} : (tensor<2x7x7x4xf32>) -> tensor<2x7x7x4xf32>
  return %s : tensor<2x7x7x4xf32>
}
