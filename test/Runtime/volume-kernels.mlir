// REQUIRES: gopt-run-mlir
// RUN: rm -rf %t && mkdir -p %t
// RUN: gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t/ref
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile --compare-npy output0=%t/ref/output0.npy --compare-npy output1=%t/ref/output1.npy --compare-npy output2=%t/ref/output2.npy --compare-npy output3=%t/ref/output3.npy --compare-npy output4=%t/ref/output4.npy --compare-npy output5=%t/ref/output5.npy | FileCheck %s
// CHECK-DAG: conv3d_0 {{ *}}conv3d {{ *}}cpu {{ *}}onednn
// CHECK-DAG: conv3d_transpose_1 {{ *}}conv3d_transpose {{ *}}cpu {{ *}}onednn
// CHECK-DAG: max_pool3d_2 {{ *}}max_pool3d {{ *}}cpu {{ *}}onednn
// CHECK-DAG: avg_pool3d_3 {{ *}}avg_pool3d {{ *}}cpu {{ *}}onednn
// CHECK-DAG: avg_pool3d_4 {{ *}}avg_pool3d {{ *}}cpu {{ *}}onednn
// CHECK-DAG: avg_pool3d_5 {{ *}}avg_pool3d {{ *}}cpu {{ *}}reference
// CHECK: compare output0 with {{.*}}: ok
// CHECK: compare output1 with {{.*}}: ok
// CHECK: compare output2 with {{.*}}: ok
// CHECK: compare output3 with {{.*}}: ok
// CHECK: compare output4 with {{.*}}: ok
// CHECK: compare output5 with {{.*}}: ok

/// The 3-D window ops' oneDNN kernels against their reference kernels, on
/// the same deterministic random inputs: conv3d with groups, dilations,
/// strides and uneven pads; conv3d_transpose with groups, dilations, pads
/// and output_padding; a dilated max_pool3d with ceil_mode; average pools
/// with count_include_pad and with SAME padding. A dilated average is left
/// to the reference kernel (VolumeKernels.cpp says why).
func.func @main(%x: tensor<2x4x5x6x7xf32>, %w: tensor<6x2x2x3x2xf32>, %b: tensor<6xf32>, %wt: tensor<4x3x3x2x2xf32>, %bt: tensor<6xf32>) -> (tensor<2x6x3x3x4xf32>, tensor<2x6x11x12x15xf32>, tensor<2x4x3x4x3xf32>, tensor<2x4x3x3x4xf32>, tensor<2x4x3x3x4xf32>, tensor<2x4x2x3x4xf32>) {
  %c = gopt.conv3d %x, %w, %b {strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 2>, pads = array<i64: 1, 1, 1, 0, 1, 2>, groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x3x3x4xf32>
  %t = gopt.conv3d_transpose %x, %wt, %bt {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 2, 1>, pads = array<i64: 1, 0, 0, 1, 0, 0>, output_padding = array<i64: 1, 0, 1>, groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<4x3x3x2x2xf32>, tensor<6xf32>) -> tensor<2x6x11x12x15xf32>
  %m = gopt.max_pool3d %x {kernel = array<i64: 2, 3, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 3>, pads = array<i64: 1, 0, 1, 1, 0, 1>, ceil_mode = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x3x4x3xf32>
  %a = gopt.avg_pool3d %x {kernel = array<i64: 2, 3, 3>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x3x3x4xf32>
  %e = gopt.avg_pool3d %x {kernel = array<i64: 3, 2, 3>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, padding = "SAME", pads = array<i64: 0, 0, 0, 0, 0, 0>, ceil_mode = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x3x3x4xf32>
  %d = gopt.avg_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 1>, pads = array<i64: 0, 0, 0, 1, 1, 0>} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x2x3x4xf32>
  return %c, %t, %m, %a, %e, %d : tensor<2x6x3x3x4xf32>, tensor<2x6x11x12x15xf32>, tensor<2x4x3x4x3xf32>, tensor<2x4x3x3x4xf32>, tensor<2x4x3x3x4xf32>, tensor<2x4x2x3x4xf32>
}
