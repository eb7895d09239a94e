// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -canonicalize -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %t.mlir --batch 3 --compare %s --atol 0 --rtol 0
// RUN: gopt-run %t.mlir --batch 3 --backend cpu --compare %s --compare-backend cpu --atol 0 --rtol 0

/// PyTorch's avg_pool2d export: a pad of nothing, then the pool. The pad
/// folds away and the results are bit for bit the same; a real pad stays.
// CHECK-LABEL: func @main
// CHECK-COUNT-1: gopt.pad
// CHECK-NOT: gopt.pad
func.func @main(%x: tensor<?x4x6x6xf32> {gopt.name = "x"}) -> (tensor<?x4x3x3xf32> {gopt.name = "y"}, tensor<?x4x8x8xf32> {gopt.name = "z"}) {
  %0 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %1 = gopt.avg_pool %0 {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x4x6x6xf32>) -> tensor<?x4x3x3xf32>
  %2 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<?x4x6x6xf32>) -> tensor<?x4x8x8xf32>
  return %1, %2 : tensor<?x4x3x3xf32>, tensor<?x4x8x8xf32>
}
