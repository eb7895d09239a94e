// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NHWC -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-6 --rtol 1e-5

/// instance_norm and lrn are layout-sensitive: converted to NHWC they read
/// their channels from the last axis and compute the same values (up to the
/// order of the sums). One transpose in, one out.
// CHECK-LABEL: func.func @norms_to_nhwc
// CHECK: %[[T:.*]] = gopt.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x6x5x5xf32>) -> tensor<2x5x5x6xf32>
// NHWC is the default data_format, which prints as no attribute.
// CHECK-NOT: "NCHW"
// CHECK: %[[I:.*]] = gopt.instance_norm %[[T]], %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : {{.*}} -> tensor<2x5x5x6xf32>
// CHECK-NOT: "NCHW"
// CHECK: %[[L:.*]] = gopt.lrn %[[I]] {{.*}} -> tensor<2x5x5x6xf32>
// CHECK: gopt.transpose %[[L]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NOT: gopt.transpose
func.func @norms_to_nhwc(%x: tensor<2x6x5x5xf32>) -> tensor<2x6x5x5xf32> {
  %s = gopt.constant dense<[0.5, 1.0, 1.5, 2.0, -1.0, 0.25]> : tensor<6xf32>
  %b = gopt.constant dense<[0.0, 0.1, -0.2, 0.3, 1.0, -1.0]> : tensor<6xf32>
  %i = gopt.instance_norm %x, %s, %b {data_format = "NCHW", epsilon = 1.0e-3 : f32} : (tensor<2x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5x5xf32>
  %l = gopt.lrn %i {size = 3 : i64, alpha = 0.5 : f32, beta = 0.75 : f32, bias = 2.0 : f32, data_format = "NCHW"} : (tensor<2x6x5x5xf32>) -> tensor<2x6x5x5xf32>
  return %l : tensor<2x6x5x5xf32>
}
