// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --atol 1e-5 --rtol 1e-5 | FileCheck %s --check-prefix=SAME

/// On the cpu backend an f32 matmul's bias add, residual add (through a
/// reshape of its row-major result) and relu/gelu run as the oneDNN
/// matmul's bias and sum and eltwise post-ops, in one step, computing what
/// the reference computes: a transformer layer's projections. The residual
/// %x is read again later, so its sum goes into a copy; %f is dead after
/// its add, so that sum is in place; output3's residual sum lands in the
/// graph result's own storage.
// CHECK-DAG: matmul+add+relu cpu onednn
// CHECK-DAG: matmul+add+reshape+add cpu onednn
// CHECK-DAG: matmul+add+gelu cpu onednn
// CHECK-DAG: matmul+add+add cpu onednn
// CHECK-DAG: matmul+add cpu onednn
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
// SAME: compare output2 with {{.*}}: ok
// SAME: compare output3 with {{.*}}: ok
func.func @main(%x: tensor<6x2x8xf32>, %w: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %bias: tensor<16xf32>, %w3: tensor<8x8xf32>) -> (tensor<6x2x8xf32>, tensor<12x16xf32>, tensor<6x2x8xf32>, tensor<6x2x8xf32>) {
  %b2 = gopt.constant dense<[0.5, -0.25, 1.0, -1.0, 0.0, 2.0, -2.0, 0.75]> : tensor<8xf32>
  // matmul + bias + relu, then matmul + bias + residual (in place: %h is
  // dead after).
  %m = gopt.matmul %x, %w : (tensor<6x2x8xf32>, tensor<8x16xf32>) -> tensor<6x2x16xf32>
  %a = gopt.add %m, %bias : (tensor<6x2x16xf32>, tensor<16xf32>) -> tensor<6x2x16xf32>
  %r = gopt.relu %a : (tensor<6x2x16xf32>) -> tensor<6x2x16xf32>
  %f = gopt.gelu %x {approximate = "none"} : (tensor<6x2x8xf32>) -> tensor<6x2x8xf32>
  %m2 = gopt.matmul %r, %w2 : (tensor<6x2x16xf32>, tensor<16x8xf32>) -> tensor<6x2x8xf32>
  %a2 = gopt.add %m2, %b2 : (tensor<6x2x8xf32>, tensor<8xf32>) -> tensor<6x2x8xf32>
  %res = gopt.add %f, %a2 : (tensor<6x2x8xf32>, tensor<6x2x8xf32>) -> tensor<6x2x8xf32>
  // 2-D matmul + bias (a transposed weight), a reshape, then the residual
  // %x, which is read again below: summed into a copy.
  %x2 = gopt.reshape %x {shape = array<i64: 12, 8>} : (tensor<6x2x8xf32>) -> tensor<12x8xf32>
  %wt = gopt.transpose %w2 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %g = gopt.matmul %x2, %w3 {transpose_b = true} : (tensor<12x8xf32>, tensor<8x8xf32>) -> tensor<12x8xf32>
  %gb = gopt.add %g, %b2 : (tensor<12x8xf32>, tensor<8xf32>) -> tensor<12x8xf32>
  %g3 = gopt.reshape %gb {shape = array<i64: 6, 2, 8>} : (tensor<12x8xf32>) -> tensor<6x2x8xf32>
  %sum = gopt.add %x, %g3 : (tensor<6x2x8xf32>, tensor<6x2x8xf32>) -> tensor<6x2x8xf32>
  // matmul + bias (no further fusion: two readers) and + gelu.
  %h = gopt.matmul %x2, %wt : (tensor<12x8xf32>, tensor<8x16xf32>) -> tensor<12x16xf32>
  %hb = gopt.add %bias, %h : (tensor<16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
  %hg = gopt.gelu %hb {approximate = "tanh"} : (tensor<12x16xf32>) -> tensor<12x16xf32>
  %hr = gopt.relu %hb : (tensor<12x16xf32>) -> tensor<12x16xf32>
  %out1 = gopt.add %hg, %hr : (tensor<12x16xf32>, tensor<12x16xf32>) -> tensor<12x16xf32>
  %k = gopt.matmul %x, %w : (tensor<6x2x8xf32>, tensor<8x16xf32>) -> tensor<6x2x16xf32>
  %kb = gopt.add %k, %bias : (tensor<6x2x16xf32>, tensor<16xf32>) -> tensor<6x2x16xf32>
  %kg = gopt.gelu %kb {approximate = "none"} : (tensor<6x2x16xf32>) -> tensor<6x2x16xf32>
  %out3 = gopt.matmul %kg, %w2 : (tensor<6x2x16xf32>, tensor<16x8xf32>) -> tensor<6x2x8xf32>
  %out3b = gopt.add %out3, %b2 : (tensor<6x2x8xf32>, tensor<8xf32>) -> tensor<6x2x8xf32>
  %out3r = gopt.add %out3b, %x : (tensor<6x2x8xf32>, tensor<6x2x8xf32>) -> tensor<6x2x8xf32>
  return %res, %out1, %sum, %out3r : tensor<6x2x8xf32>, tensor<12x16xf32>, tensor<6x2x8xf32>, tensor<6x2x8xf32>
}
