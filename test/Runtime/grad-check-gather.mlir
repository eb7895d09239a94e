// RUN: gopt-run %s --grad-check --batch 3 --atol 2e-5 --rtol 0.01 | FileCheck %s

/// Autodiff of gather (gather_grad, a scatter-add into zeros): an embedding
/// table read along axis 0 with repeated and negative indices, and a weight
/// read along axis 1, against finite differences. The repeated rows check
/// that gradients accumulate rather than overwrite; rows never read get 0.
// CHECK: grad-check
// CHECK-DAG: table {{.*}}: ok
// CHECK-DAG: w {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x6xf32> {gopt.name = "x"}) -> (tensor<?x4xf32> {gopt.name = "logits"}) {
  %table = gopt.constant dense<[[0.5, -0.3, 0.2, 0.8], [-0.6, 0.1, 0.4, 0.1], [-0.6, 0.3, 0.2, -0.5], [-0.2, 0.5, 0.3, -0.4], [0.7, 0.2, 0.3, -0.1], [0.4, 0.2, -0.3, 0.6]]> : tensor<6x4xf32> loc("table")
  %ids = gopt.constant dense<[[0, 2, -1], [2, 5, 0]]> : tensor<2x3xi64>
  %w = gopt.constant dense<[[0.3, -0.2, 0.1, 0.2, -0.1], [0.2, 0.1, -0.3, 0.1, 0.2], [-0.1, 0.3, 0.2, -0.2, 0.1], [0.1, 0.1, 0.1, 0.3, -0.3]]> : tensor<4x5xf32> loc("w")
  %cols = gopt.constant dense<[4, 0, 4, -2]> : tensor<4xi32>
  %e = gopt.gather %table, %ids : (tensor<6x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %m = gopt.reshape %e {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %h = gopt.matmul %x, %m : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %g = gopt.gather %w, %cols {axis = 1 : i64} : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<4x4xf32>
  %y = gopt.matmul %h, %g : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
