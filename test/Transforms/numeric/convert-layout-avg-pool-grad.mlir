// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-6 --rtol 1e-6

/// avg_pool_grad converts like the other pool gradients: x and dy
/// transposed in, dx transposed out, the window attributes unchanged, and
/// the same values on random inputs.
// CHECK-LABEL: func @avg_pool_grad_nhwc
// CHECK: gopt.avg_pool_grad %{{.*}}, %{{.*}} {count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x5x5xf32>
func.func @avg_pool_grad_nhwc(%x: tensor<2x5x5x3xf32>, %dy: tensor<2x3x3x3xf32>) -> tensor<2x5x5x3xf32> {
  %0 = gopt.avg_pool_grad %x, %dy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<2x5x5x3xf32>, tensor<2x3x3x3xf32>) -> tensor<2x5x5x3xf32>
  return %0 : tensor<2x5x5x3xf32>
}
