// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 0 --rtol 0 --warmup 0 --iterations 1
// RUN: gopt-run %s --compare %t.mlir --compare-backend cpu --atol 1e-5 --rtol 1e-5 --warmup 0 --iterations 1
// RUN: rm -rf %t.ref && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t.ref
// RUN: gopt-run %t.mlir --backend cpu --warmup 0 --iterations 1 --compare-npy output0=%t.ref/output0.npy --atol 1e-5 --rtol 1e-5 | FileCheck %s --check-prefix=CPU
// CPU: compare output0 with {{.*}}: ok

/// conv2d_transpose and resize convert like the other layout-sensitive ops:
/// the activation transposed in and out, data_format switched, the filter (HWIO, the default)
/// and the spatial attributes unchanged. The reference kernels sum in the
/// same order in either layout, so the converted graph is bit-exact. On the
/// cpu backend (oneDNN deconvolution, the fast nearest/linear resize) both
/// layouts agree, and the converted graph agrees with the reference kernels
/// on the original to rounding.
// CHECK-LABEL: func.func @image_nhwc
// CHECK: gopt.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x5x6x4xf32>) -> tensor<2x4x5x6xf32>
// CHECK: gopt.conv2d_transpose {{.*}}data_format = "NCHW", dilations = array<i64: 1, 2>, groups = 2 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x5x6xf32>, tensor<3x3x3x4xf32>, tensor<6xf32>) -> tensor<2x6x11x15xf32>
// CHECK: gopt.resize {{.*}}data_format = "NCHW"{{.*}} -> tensor<2x6x7x9xf32>
// CHECK: gopt.resize {{.*}}data_format = "NCHW"{{.*}} -> tensor<2x6x14x13xf32>
// CHECK: gopt.resize {{.*}}data_format = "NCHW"{{.*}} -> tensor<2x6x5x5xf32>
// CHECK: gopt.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x6x5x5xf32>) -> tensor<2x5x5x6xf32>
func.func @image_nhwc(%x: tensor<2x5x6x4xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<2x5x5x6xf32> {
  %d = gopt.conv2d_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x5x6x4xf32>, tensor<3x3x3x4xf32>, tensor<6xf32>) -> tensor<2x11x15x6xf32>
  %l = gopt.resize %d {sizes = array<i64: 7, 9>, mode = "linear"} : (tensor<2x11x15x6xf32>) -> tensor<2x7x9x6xf32>
  %n = gopt.resize %l {scales = array<f32: 2.0, 1.5>, mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "round_prefer_ceil"} : (tensor<2x7x9x6xf32>) -> tensor<2x14x13x6xf32>
  %c = gopt.resize %n {sizes = array<i64: 5, 5>, mode = "cubic", coordinate_transformation_mode = "align_corners", exclude_outside = true} : (tensor<2x14x13x6xf32>) -> tensor<2x5x5x6xf32>
  return %c : tensor<2x5x5x6xf32>
}
