// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --compare-npy output3=%t/output3.npy --compare-npy output4=%t/output4.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME

/// On the cpu backend the attention PyTorch's nn.MultiheadAttention exports
/// over sequence-major heads [L, N, d] (the queries scaled by a division or
/// a multiplication, transposes to head-major, matmul, softmax, matmul, a
/// transpose back) runs as one kernel reading the heads in place; here 6
/// queries and 7 keys over 4 heads, value depth 5, computing what the
/// reference computes. Without the transpose back the result is
/// head-major; with a second reader of the scores nothing is fused. Heads
/// that are reshaped slices of one [L, B, 3D] projection (2 batch rows of 2
/// heads of 8) are read in place, even where a shape op reads a slice.
// CHECK-DAG: slice+reshape+slice+reshape+slice+reshape+transpose+transpose+transpose+matmul+softmax+matmul+transpose cpu onednn
// CHECK-DAG: div+transpose+transpose+transpose+matmul+softmax+matmul+transpose cpu onednn
// CHECK-DAG: mul+transpose+transpose+transpose+matmul+softmax+matmul cpu onednn
// CHECK-DAG: softmax cpu fast
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
// SAME: compare output2 with {{.*}}: ok
// SAME: compare output3 with {{.*}}: ok
// SAME: compare output4 with {{.*}}: ok
func.func @main(%q: tensor<6x4x8xf32>, %k: tensor<7x4x8xf32>, %v: tensor<7x4x5xf32>, %qkv: tensor<6x2x48xf32>) -> (tensor<6x4x5xf32>, tensor<4x6x5xf32>, tensor<4x6x5xf32>, tensor<6x4x8xf32>, tensor<3xi64>) {
  %c = gopt.constant dense<2.828427> : tensor<1x1x1xf32>
  %qs = gopt.div %q, %c : (tensor<6x4x8xf32>, tensor<1x1x1xf32>) -> tensor<6x4x8xf32>
  %qt = gopt.transpose %qs {perm = array<i64: 1, 0, 2>} : (tensor<6x4x8xf32>) -> tensor<4x6x8xf32>
  %kt = gopt.transpose %k {perm = array<i64: 1, 2, 0>} : (tensor<7x4x8xf32>) -> tensor<4x8x7xf32>
  %vt = gopt.transpose %v {perm = array<i64: 1, 0, 2>} : (tensor<7x4x5xf32>) -> tensor<4x7x5xf32>
  %s = gopt.matmul %qt, %kt : (tensor<4x6x8xf32>, tensor<4x8x7xf32>) -> tensor<4x6x7xf32>
  %p = gopt.softmax %s {axis = 2 : i64} : (tensor<4x6x7xf32>) -> tensor<4x6x7xf32>
  %o = gopt.matmul %p, %vt : (tensor<4x6x7xf32>, tensor<4x7x5xf32>) -> tensor<4x6x5xf32>
  %out0 = gopt.transpose %o {perm = array<i64: 1, 0, 2>} : (tensor<4x6x5xf32>) -> tensor<6x4x5xf32>
  // Multiplied queries (the constant first), head-major result.
  %m = gopt.constant dense<0.3> : tensor<f32>
  %qm = gopt.mul %m, %q : (tensor<f32>, tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  %qt1 = gopt.transpose %qm {perm = array<i64: 1, 0, 2>} : (tensor<6x4x8xf32>) -> tensor<4x6x8xf32>
  %kt1 = gopt.transpose %k {perm = array<i64: 1, 2, 0>} : (tensor<7x4x8xf32>) -> tensor<4x8x7xf32>
  %vt1 = gopt.transpose %v {perm = array<i64: 1, 0, 2>} : (tensor<7x4x5xf32>) -> tensor<4x7x5xf32>
  %s1 = gopt.matmul %qt1, %kt1 : (tensor<4x6x8xf32>, tensor<4x8x7xf32>) -> tensor<4x6x7xf32>
  %p1 = gopt.softmax %s1 {axis = -1 : i64} : (tensor<4x6x7xf32>) -> tensor<4x6x7xf32>
  %out1 = gopt.matmul %p1, %vt1 : (tensor<4x6x7xf32>, tensor<4x7x5xf32>) -> tensor<4x6x5xf32>
  // The scores are read twice: the ops run one by one.
  %qt2 = gopt.transpose %q {perm = array<i64: 1, 0, 2>} : (tensor<6x4x8xf32>) -> tensor<4x6x8xf32>
  %kt2 = gopt.transpose %k {perm = array<i64: 1, 2, 0>} : (tensor<7x4x8xf32>) -> tensor<4x8x7xf32>
  %vt2 = gopt.transpose %v {perm = array<i64: 1, 0, 2>} : (tensor<7x4x5xf32>) -> tensor<4x7x5xf32>
  %s2 = gopt.matmul %qt2, %kt2 : (tensor<4x6x8xf32>, tensor<4x8x7xf32>) -> tensor<4x6x7xf32>
  %p2 = gopt.softmax %s2 {axis = 2 : i64} : (tensor<4x6x7xf32>) -> tensor<4x6x7xf32>
  %o2 = gopt.matmul %p2, %vt2 : (tensor<4x6x7xf32>, tensor<4x7x5xf32>) -> tensor<4x6x5xf32>
  %s2r = gopt.relu %s2 : (tensor<4x6x7xf32>) -> tensor<4x6x7xf32>
  %s2m = gopt.matmul %s2r, %vt2 : (tensor<4x6x7xf32>, tensor<4x7x5xf32>) -> tensor<4x6x5xf32>
  %out2 = gopt.add %o2, %s2m : (tensor<4x6x5xf32>, tensor<4x6x5xf32>) -> tensor<4x6x5xf32>
  // q, k and v sliced from one projection.
  %sq = gopt.slice %qkv {starts = array<i64: 0, 0, 0>, ends = array<i64: 6, 2, 16>, steps = array<i64: 1, 1, 1>} : (tensor<6x2x48xf32>) -> tensor<6x2x16xf32>
  %q3 = gopt.reshape %sq {shape = array<i64: 6, 4, 8>} : (tensor<6x2x16xf32>) -> tensor<6x4x8xf32>
  %sk = gopt.slice %qkv {starts = array<i64: 0, 0, 16>, ends = array<i64: 6, 2, 32>, steps = array<i64: 1, 1, 1>} : (tensor<6x2x48xf32>) -> tensor<6x2x16xf32>
  %kshape = gopt.shape %sk : (tensor<6x2x16xf32>) -> tensor<3xi64>
  %k3 = gopt.reshape %sk {shape = array<i64: 6, 4, 8>} : (tensor<6x2x16xf32>) -> tensor<6x4x8xf32>
  %sv = gopt.slice %qkv {starts = array<i64: 0, 0, 32>, ends = array<i64: 6, 2, 48>, steps = array<i64: 1, 1, 1>} : (tensor<6x2x48xf32>) -> tensor<6x2x16xf32>
  %v3 = gopt.reshape %sv {shape = array<i64: 6, 4, 8>} : (tensor<6x2x16xf32>) -> tensor<6x4x8xf32>
  %qt3 = gopt.transpose %q3 {perm = array<i64: 1, 0, 2>} : (tensor<6x4x8xf32>) -> tensor<4x6x8xf32>
  %kt3 = gopt.transpose %k3 {perm = array<i64: 1, 2, 0>} : (tensor<6x4x8xf32>) -> tensor<4x8x6xf32>
  %vt3 = gopt.transpose %v3 {perm = array<i64: 1, 0, 2>} : (tensor<6x4x8xf32>) -> tensor<4x6x8xf32>
  %s3 = gopt.matmul %qt3, %kt3 : (tensor<4x6x8xf32>, tensor<4x8x6xf32>) -> tensor<4x6x6xf32>
  %p3 = gopt.softmax %s3 {axis = 2 : i64} : (tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %o3 = gopt.matmul %p3, %vt3 : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %out3 = gopt.transpose %o3 {perm = array<i64: 1, 0, 2>} : (tensor<4x6x8xf32>) -> tensor<6x4x8xf32>
  return %out0, %out1, %out2, %out3, %kshape : tensor<6x4x5xf32>, tensor<4x6x5xf32>, tensor<4x6x5xf32>, tensor<6x4x8xf32>, tensor<3xi64>
}
