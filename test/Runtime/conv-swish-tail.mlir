// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --atol 1e-5 --rtol 1e-5 | FileCheck %s --check-prefix=SAME

/// On the cpu backend x * sigmoid(x) after a conv (SiLU as PyTorch exports
/// it, EfficientNet's activation) runs as the conv's swish post-op, in one
/// step, computing what the reference computes; a sigmoid whose result
/// is also read elsewhere stays a separate op (f32 across threads).
// CHECK-DAG: conv2d+sigmoid+mul cpu onednn
// CHECK-DAG: conv2d+sigmoid+mul+add cpu onednn
// CHECK-DAG: sigmoid cpu fast
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
// SAME: compare output2 with {{.*}}: ok
func.func @main(%x: tensor<1x4x6x6xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %w = gopt.constant dense<[[[[0.3, -0.2, 0.1], [0.0, 0.5, -0.4], [0.2, 0.1, 0.3]]]]> : tensor<1x1x3x3xf32>
  %wb = gopt.expand %w {shape = array<i64: 8, 4, 3, 3>} : (tensor<1x1x3x3xf32>) -> tensor<8x4x3x3xf32>
  %b = gopt.constant dense<[-0.5, 0.25, 1.0, -1.0, 0.0, 2.0, -2.0, 0.5]> : tensor<8xf32>
  %t = gopt.constant dense<-0.25> : tensor<1xf32>
  %c = gopt.conv2d %x, %wb, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %s = gopt.sigmoid %c : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %m = gopt.mul %c, %s : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %c2 = gopt.conv2d %x, %wb, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %s2 = gopt.sigmoid %c2 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %m2 = gopt.mul %s2, %c2 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %a2 = gopt.add %m2, %t : (tensor<1x8x6x6xf32>, tensor<1xf32>) -> tensor<1x8x6x6xf32>
  %c3 = gopt.conv2d %x, %wb, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %s3 = gopt.sigmoid %c3 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %m3 = gopt.mul %c3, %s3 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %a3 = gopt.add %m3, %s3 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %m, %a2, %a3 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}
