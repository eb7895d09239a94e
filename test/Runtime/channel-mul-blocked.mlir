// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s --check-prefix=NOREORDER
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --atol 1e-5 --rtol 1e-5 | FileCheck %s --check-prefix=SAME

/// On the cpu backend squeeze-and-excitation's gate, x * s with s one value
/// per channel, multiplies x in the blocked layout its conv wrote (oneDNN's
/// binary with broadcast), either operand order, 24 channels included
/// (nChw16c pads them to 32): no reorders to the plain layout and back
/// around it, and the reference's numbers.
// NOREORDER: {{^}}op {{ *}}kind
// NOREORDER-NOT: reorder:conv2d
// NOREORDER-NOT: reorder:mul
// CHECK-DAG: mul_{{[0-9]+}} mul cpu onednn
// CHECK-DAG: mul_{{[0-9]+}} mul cpu onednn
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
func.func @main(%x: tensor<1x4x10x10xf32>) -> (tensor<1x24x10x10xf32>, tensor<1x24x10x10xf32>) {
  %w = gopt.constant dense<[[[[0.3, -0.2, 0.1], [0.0, 0.5, -0.4], [0.2, 0.1, 0.3]]]]> : tensor<1x1x3x3xf32>
  %wb = gopt.expand %w {shape = array<i64: 24, 4, 3, 3>} : (tensor<1x1x3x3xf32>) -> tensor<24x4x3x3xf32>
  %w1 = gopt.constant dense<[[[[0.5]], [[-0.25]], [[0.125]], [[1.0]]]]> : tensor<1x4x1x1xf32>
  %w1b = gopt.expand %w1 {shape = array<i64: 24, 4, 1, 1>} : (tensor<1x4x1x1xf32>) -> tensor<24x4x1x1xf32>
  %c = gopt.conv2d %x, %wb {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x10x10xf32>, tensor<24x4x3x3xf32>) -> tensor<1x24x10x10xf32>
  %p = gopt.global_avg_pool %x {data_format = "NCHW"} : (tensor<1x4x10x10xf32>) -> tensor<1x4x1x1xf32>
  %g = gopt.conv2d %p, %w1b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x1x1xf32>, tensor<24x4x1x1xf32>) -> tensor<1x24x1x1xf32>
  %s = gopt.hard_sigmoid %g {alpha = 0.16666667 : f32, beta = 0.5 : f32} : (tensor<1x24x1x1xf32>) -> tensor<1x24x1x1xf32>
  %m = gopt.mul %s, %c : (tensor<1x24x1x1xf32>, tensor<1x24x10x10xf32>) -> tensor<1x24x10x10xf32>
  %w2 = gopt.constant dense<0.0625> : tensor<1x1x1x1xf32>
  %w2b = gopt.expand %w2 {shape = array<i64: 24, 24, 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<24x24x1x1xf32>
  %c2 = gopt.conv2d %m, %w2b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x24x10x10xf32>, tensor<24x24x1x1xf32>) -> tensor<1x24x10x10xf32>
  %m2 = gopt.mul %c2, %g : (tensor<1x24x10x10xf32>, tensor<1x24x1x1xf32>) -> tensor<1x24x10x10xf32>
  return %m, %m2 : tensor<1x24x10x10xf32>, tensor<1x24x10x10xf32>
}
