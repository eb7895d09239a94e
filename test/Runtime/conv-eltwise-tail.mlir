// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --atol 1e-5 --rtol 1e-5 | FileCheck %s --check-prefix=SAME

/// On the cpu backend a conv's hard_swish and the constant scalar
/// multiplies and adds after it (PP-LCNet's activation and learnable affine
/// block) run as the conv's eltwise post-ops, in one step, computing what
/// the reference computes. Two multiply-add pairs compose into one linear
/// post-op (oneDNN 2.6 computes a second one with the first's parameters).
// CHECK-DAG: conv2d+hard_swish+mul+add cpu onednn
// CHECK-DAG: conv2d+mul+add+mul+add cpu onednn
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
func.func @main(%x: tensor<1x4x6x6xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %w = gopt.constant dense<[[[[0.3, -0.2, 0.1], [0.0, 0.5, -0.4], [0.2, 0.1, 0.3]]]]> : tensor<1x1x3x3xf32>
  %wb = gopt.expand %w {shape = array<i64: 8, 4, 3, 3>} : (tensor<1x1x3x3xf32>) -> tensor<8x4x3x3xf32>
  %b = gopt.constant dense<[-0.5, 0.25, 1.0, -1.0, 0.0, 2.0, -2.0, 0.5]> : tensor<8xf32>
  %s = gopt.constant dense<1.5> : tensor<1xf32>
  %t = gopt.constant dense<-0.25> : tensor<1xf32>
  %s2 = gopt.constant dense<-0.75> : tensor<f32>
  %t2 = gopt.constant dense<2.0> : tensor<f32>
  %c = gopt.conv2d %x, %wb, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %h = gopt.hard_swish %c : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %m = gopt.mul %h, %s : (tensor<1x8x6x6xf32>, tensor<1xf32>) -> tensor<1x8x6x6xf32>
  %a = gopt.add %t, %m : (tensor<1xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %c2 = gopt.conv2d %x, %wb, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %m1 = gopt.mul %c2, %s : (tensor<1x8x6x6xf32>, tensor<1xf32>) -> tensor<1x8x6x6xf32>
  %a1 = gopt.add %m1, %t : (tensor<1x8x6x6xf32>, tensor<1xf32>) -> tensor<1x8x6x6xf32>
  %m2 = gopt.mul %a1, %s2 : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %a2 = gopt.add %m2, %t2 : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  return %a, %a2 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}
