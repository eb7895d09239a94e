// REQUIRES: gopt-run-mlir
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --compare-npy output5=%t/output5.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s
// RUN: gopt-run %s --optimize --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --compare-npy output5=%t/output5.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s
// RUN: gopt-run %s --optimize --threads 1 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --compare-npy output5=%t/output5.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s

/// LSTM layers as PyTorch exports them (no peepholes, clip or input_forget)
/// with hidden sizes of whole 16-float vectors take the CPU backend's gate
/// pass of independent gates: 48 units are slices of 32 and 16 with two
/// threads (a pair of vectors and a single one), one slice of 48 with one.
/// Compared with the reference: a batch of 32 (the slices, not
/// lstm_forward) forward with initial states and in reverse with per-row
/// sequence lengths, and one row with R a constant (packed once into
/// panels under --optimize, which the batch-1 GEMM then reads).
// CHECK: compare output0 with {{.*}}: ok
// CHECK: compare output1 with {{.*}}: ok
// CHECK: compare output2 with {{.*}}: ok
// CHECK: compare output3 with {{.*}}: ok
// CHECK: compare output4 with {{.*}}: ok
// CHECK: compare output5 with {{.*}}: ok
func.func @main(%x: tensor<7x32x16xf32>, %w: tensor<1x192x16xf32>, %r: tensor<1x192x48xf32>, %b: tensor<1x384xf32>, %h0: tensor<1x32x48xf32>, %c0: tensor<1x32x48xf32>) -> (tensor<7x1x32x48xf32>, tensor<1x32x48xf32>, tensor<1x32x48xf32>, tensor<7x1x32x48xf32>, tensor<7x1x1x48xf32>, tensor<1x1x48xf32>) {
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %y1, %h1, %c1 = gopt.lstm %x, %w, %r, %b, %h0, %c0, %zero {hidden_size = 48 : i64} : (tensor<7x32x16xf32>, tensor<1x192x16xf32>, tensor<1x192x48xf32>, tensor<1x384xf32>, tensor<1x32x48xf32>, tensor<1x32x48xf32>, tensor<f32>) -> (tensor<7x1x32x48xf32>, tensor<1x32x48xf32>, tensor<1x32x48xf32>)
  %lens = gopt.constant dense<[3, 5, 0, 4, 2, 5, 1, 3, 4, 4, 1, 1, 7, 7, 1, 5, 1, 6, 2, 0, 4, 6, 6, 1, 0, 0, 6, 5, 4, 3, 0, 4]> : tensor<32xi32>
  %y2, %h2, %c2 = gopt.lstm %x, %w, %r, %b, %zero, %zero, %zero, %lens {hidden_size = 48 : i64, direction = "reverse"} : (tensor<7x32x16xf32>, tensor<1x192x16xf32>, tensor<1x192x48xf32>, tensor<1x384xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<32xi32>) -> (tensor<7x1x32x48xf32>, tensor<1x32x48xf32>, tensor<1x32x48xf32>)
  %x1 = gopt.slice %x {starts = array<i64: 0, 0, 0>, ends = array<i64: 7, 1, 16>, steps = array<i64: 1, 1, 1>} : (tensor<7x32x16xf32>) -> tensor<7x1x16xf32>
  %r1 = gopt.constant dense<[[[-0.03, 0.01, -0.02, 0.01, 0.02, -0.05, -0.06, 0.04, -0.03, -0.03, 0.06, -0.00, 0.04, -0.00, 0.02, -0.04, 0.02, 0.04, 0.00, 0.03, 0.02, -0.05, 0.03, 0.01, -0.02, -0.06, 0.04, -0.00, 0.03, 0.05, 0.03, 0.05, -0.01, 0.04, -0.01, 0.05, 0.05, -0.05, -0.04, -0.03, 0.06, -0.01, 0.02, -0.02, 0.00, -0.01, -0.02, 0.01]]]> : tensor<1x1x48xf32>
  %r1b = gopt.expand %r1 {shape = array<i64: 1, 192, 48>} : (tensor<1x1x48xf32>) -> tensor<1x192x48xf32>
  %y3, %h3, %c3 = gopt.lstm %x1, %w, %r1b, %b, %zero, %zero, %zero {hidden_size = 48 : i64} : (tensor<7x1x16xf32>, tensor<1x192x16xf32>, tensor<1x192x48xf32>, tensor<1x384xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<7x1x1x48xf32>, tensor<1x1x48xf32>, tensor<1x1x48xf32>)
  return %y1, %h1, %c1, %y2, %y3, %c3 : tensor<7x1x32x48xf32>, tensor<1x32x48xf32>, tensor<1x32x48xf32>, tensor<7x1x32x48xf32>, tensor<7x1x1x48xf32>, tensor<1x1x48xf32>
}
