// REQUIRES: gopt-run-mlir
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s
// RUN: gopt-run %s --optimize --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s
// RUN: gopt-run %s --optimize --threads 1 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s

/// Batches of 8 and more rows: two stacked layers as PyTorch exports them,
/// the first with initial states and the second without (and with
/// input_forget), and a batch of 11 (8 rows and 3, each with its own
/// register blocking) with per-row sequence lengths, peepholes and clip,
/// compared with the reference kernel. 40 hidden units
/// are slices of 32 and 8 units with two threads: 160 and 32 gate columns,
/// so both whole and partial groups of 16-column panels.
// CHECK: compare output0 with {{.*}}: ok
// CHECK: compare output1 with {{.*}}: ok
// CHECK: compare output2 with {{.*}}: ok
// CHECK: compare output3 with {{.*}}: ok
// CHECK: compare output4 with {{.*}}: ok
func.func @main(%x: tensor<6x8x12xf32>, %w1: tensor<1x160x12xf32>, %r1: tensor<1x160x40xf32>, %b1: tensor<1x320xf32>, %h0: tensor<1x8x40xf32>, %c0: tensor<1x8x40xf32>, %w2: tensor<1x160x40xf32>, %r2: tensor<1x160x40xf32>, %b2: tensor<1x320xf32>, %x3: tensor<5x11x12xf32>, %p: tensor<1x120xf32>) -> (tensor<6x1x8x40xf32>, tensor<1x8x40xf32>, tensor<1x8x40xf32>, tensor<5x1x11x40xf32>, tensor<1x11x40xf32>) {
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %y1, %h1, %c1 = gopt.lstm %x, %w1, %r1, %b1, %h0, %c0, %zero {hidden_size = 40 : i64} : (tensor<6x8x12xf32>, tensor<1x160x12xf32>, tensor<1x160x40xf32>, tensor<1x320xf32>, tensor<1x8x40xf32>, tensor<1x8x40xf32>, tensor<f32>) -> (tensor<6x1x8x40xf32>, tensor<1x8x40xf32>, tensor<1x8x40xf32>)
  %x2 = gopt.reshape %y1 {shape = array<i64: 6, 8, 40>} : (tensor<6x1x8x40xf32>) -> tensor<6x8x40xf32>
  %y2, %h2, %c2 = gopt.lstm %x2, %w2, %r2, %b2, %zero, %zero, %zero {hidden_size = 40 : i64, input_forget = true} : (tensor<6x8x40xf32>, tensor<1x160x40xf32>, tensor<1x160x40xf32>, tensor<1x320xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<6x1x8x40xf32>, tensor<1x8x40xf32>, tensor<1x8x40xf32>)
  %lens = gopt.constant dense<[5, 2, 4, 5, 1, 3, 5, 0, 4, 5, 2]> : tensor<11xi32>
  %y3, %h3, %c3 = gopt.lstm %x3, %w1, %r1, %b1, %zero, %zero, %p, %lens {hidden_size = 40 : i64, direction = "reverse", clip = 0.5 : f32} : (tensor<5x11x12xf32>, tensor<1x160x12xf32>, tensor<1x160x40xf32>, tensor<1x320xf32>, tensor<f32>, tensor<f32>, tensor<1x120xf32>, tensor<11xi32>) -> (tensor<5x1x11x40xf32>, tensor<1x11x40xf32>, tensor<1x11x40xf32>)
  return %y2, %h2, %c2, %y3, %h3 : tensor<6x1x8x40xf32>, tensor<1x8x40xf32>, tensor<1x8x40xf32>, tensor<5x1x11x40xf32>, tensor<1x11x40xf32>
}
