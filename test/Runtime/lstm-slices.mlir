// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME
// RUN: gopt-run %s --optimize --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME

/// The cpu backend's LSTM splits the hidden units over the threads (slices
/// of 16-float vectors: 40 units are 32 + 8 with two threads), each slice
/// multiplying the whole previous h by its rows of R; these compare it with
/// the reference across slices: per-run packed R (an input) with
/// bidirectional layers, per-row sequence lengths, peepholes and clip, and
/// R packed once (a constant, folded by --optimize) with input_forget.
// CHECK: lstm cpu gemm
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
// SAME: compare output2 with {{.*}}: ok
// SAME: compare output3 with {{.*}}: ok
// SAME: compare output4 with {{.*}}: ok
func.func @main(%x: tensor<5x3x8xf32>, %w: tensor<2x160x8xf32>, %r: tensor<2x160x40xf32>, %b: tensor<2x320xf32>, %h0: tensor<2x3x40xf32>, %c0: tensor<2x3x40xf32>, %p: tensor<2x120xf32>) -> (tensor<5x2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<5x1x3x40xf32>, tensor<1x3x40xf32>) {
  %lens = gopt.constant dense<[5, 2, 4]> : tensor<3xi32>
  %y, %h, %c = gopt.lstm %x, %w, %r, %b, %h0, %c0, %p, %lens {hidden_size = 40 : i64, direction = "bidirectional", clip = 3.0 : f32} : (tensor<5x3x8xf32>, tensor<2x160x8xf32>, tensor<2x160x40xf32>, tensor<2x320xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x120xf32>, tensor<3xi32>) -> (tensor<5x2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>)
  %w1 = gopt.slice %w {starts = array<i64: 0, 0, 0>, ends = array<i64: 1, 160, 8>, steps = array<i64: 1, 1, 1>} : (tensor<2x160x8xf32>) -> tensor<1x160x8xf32>
  %r1 = gopt.constant dense<[[[0.05, -0.03, 0.02, 0.04, -0.01, 0.03, -0.02, 0.01, 0.0, -0.04, 0.02, 0.03, -0.05, 0.01, 0.04, -0.02, 0.03, -0.01, 0.02, 0.05, -0.03, 0.01, 0.0, 0.02, -0.04, 0.03, 0.01, -0.02, 0.04, -0.01, 0.02, 0.03, -0.03, 0.01, 0.05, -0.02, 0.0, 0.04, -0.01, 0.02]]]> : tensor<1x1x40xf32>
  %r1b = gopt.expand %r1 {shape = array<i64: 1, 160, 40>} : (tensor<1x1x40xf32>) -> tensor<1x160x40xf32>
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %y1, %h1, %c1 = gopt.lstm %x, %w1, %r1b, %zero, %zero, %zero, %zero {hidden_size = 40 : i64, input_forget = true} : (tensor<5x3x8xf32>, tensor<1x160x8xf32>, tensor<1x160x40xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<5x1x3x40xf32>, tensor<1x3x40xf32>, tensor<1x3x40xf32>)
  return %y, %h, %c, %y1, %h1 : tensor<5x2x3x40xf32>, tensor<2x3x40xf32>, tensor<2x3x40xf32>, tensor<5x1x3x40xf32>, tensor<1x3x40xf32>
}
