// RUN: gopt-run %s --grad-check --batch 3 | FileCheck %s

/// matmul's gradients for every combination of transpose flags, with
/// parameters on either side.
// CHECK-DAG: w_nn {{.*}}: ok
// CHECK-DAG: w_nt {{.*}}: ok
// CHECK-DAG: w_tn {{.*}}: ok
// CHECK-DAG: w_tt {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}) -> (tensor<?x2xf32> {gopt.name = "logits"}) {
  %w_nn = gopt.constant dense<[[0.2, -0.1, 0.3, 0.1], [0.1, 0.2, -0.2, 0.05], [-0.3, 0.1, 0.2, 0.1]]> : tensor<3x4xf32> loc("w_nn")
  %w_nt = gopt.constant dense<[[0.3, -0.2, 0.1, 0.4], [0.2, 0.1, -0.3, 0.2], [-0.1, 0.3, 0.2, 0.1], [0.1, 0.1, 0.1, -0.2], [0.2, -0.3, 0.1, 0.1]]> : tensor<5x4xf32> loc("w_nt")
  %w_tn = gopt.constant dense<[[0.1, 0.2, -0.1], [0.3, -0.2, 0.1], [0.2, 0.1, 0.3], [-0.1, 0.2, 0.2], [0.1, -0.1, 0.3]]> : tensor<5x3xf32> loc("w_tn")
  %w_tt = gopt.constant dense<[[0.2, -0.3, 0.1], [0.4, 0.1, -0.2]]> : tensor<2x3xf32> loc("w_tt")
  %0 = gopt.matmul %x, %w_nn : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %1 = gopt.tanh %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = gopt.matmul %1, %w_nt {transpose_b = true} : (tensor<?x4xf32>, tensor<5x4xf32>) -> tensor<?x5xf32>
  %3 = gopt.tanh %2 : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %4 = gopt.transpose %3 {perm = array<i64: 1, 0>} : (tensor<?x5xf32>) -> tensor<5x?xf32>
  // [5,3]^T [5,?] = [3,?]
  %5 = gopt.matmul %w_tn, %4 {transpose_a = true} : (tensor<5x3xf32>, tensor<5x?xf32>) -> tensor<3x?xf32>
  %6 = gopt.tanh %5 : (tensor<3x?xf32>) -> tensor<3x?xf32>
  // [3,?]^T [2,3]^T = [?,2]
  %7 = gopt.matmul %6, %w_tt {transpose_a = true, transpose_b = true} : (tensor<3x?xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  return %7 : tensor<?x2xf32>
}
