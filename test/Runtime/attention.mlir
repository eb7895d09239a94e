// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: rm -rf %t && gopt-run %s --backend reference --warmup 0 --iterations 1 --output-dir %t
// RUN: gopt-run %s --threads 2 --warmup 0 --iterations 1 --compare-npy output0=%t/output0.npy --compare-npy output1=%t/output1.npy --compare-npy output2=%t/output2.npy --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME

/// On the cpu backend the attention PyTorch's nn.MultiheadAttention exports
/// over sequence-major heads [L, N, d] (the queries scaled by a division or
/// a multiplication, transposes to head-major, matmul, softmax, matmul, a
/// transpose back) runs as one kernel reading the heads in place; here 6
/// queries and 7 keys over 4 heads, value depth 5, computing what the
/// reference computes. Without the transpose back the result is
/// head-major; with a second reader of the scores nothing is fused.
// CHECK-DAG: div+transpose+transpose+transpose+matmul+softmax+matmul+transpose cpu onednn
// CHECK-DAG: mul+transpose+transpose+transpose+matmul+softmax+matmul cpu onednn
// CHECK-DAG: softmax cpu fast
// SAME: compare output0 with {{.*}}: ok
// SAME: compare output1 with {{.*}}: ok
// SAME: compare output2 with {{.*}}: ok
func.func @main(%q: tensor<6x4x8xf32>, %k: tensor<7x4x8xf32>, %v: tensor<7x4x5xf32>) -> (tensor<6x4x5xf32>, tensor<4x6x5xf32>, tensor<4x6x5xf32>) {
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
  return %out0, %out1, %out2 : tensor<6x4x5xf32>, tensor<4x6x5xf32>, tensor<4x6x5xf32>
}
