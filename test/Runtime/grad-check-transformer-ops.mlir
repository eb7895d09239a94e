// RUN: gopt-run %s --grad-check --batch 3 --atol 2e-5 --rtol 0.01 | FileCheck %s

/// Autodiff of the ops transformer blocks add: gelu (exact and tanh forms),
/// erf, and batched matmuls whose operands broadcast over batch dims (a
/// rank-2 weight against a batch, a size-1 batch dim, a rank-2 left
/// operand), against finite differences. The tolerances are tight (the
/// measured errors are below 5e-6) so that a wrong term of gelu's
/// derivative (errors ~3e-4 here) fails.
// CHECK: grad-check
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK-DAG: w3 {{.*}}: ok
// CHECK-DAG: w4 {{.*}}: ok
// CHECK-DAG: w5 {{.*}}: ok
// CHECK-DAG: w6 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2, 0.8, -0.6, 0.1], [0.4, 0.1, -0.6, 0.3, 0.2, -0.5], [-0.2, 0.5, 0.3, -0.4, 0.7, 0.2], [0.3, -0.1, 0.4, 0.2, -0.3, 0.6]]> : tensor<4x6xf32> loc("w1")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.1, 0.2, -0.1, 0.4], [0.2, 0.1, -0.3, 0.1, 0.2, -0.2], [-0.1, 0.3, 0.2, -0.2, 0.1, 0.3], [0.1, 0.1, 0.1, 0.3, -0.3, 0.2], [0.2, -0.3, 0.1, 0.1, 0.2, 0.1], [-0.2, 0.2, 0.3, -0.1, 0.1, 0.2]]> : tensor<6x6xf32> loc("w2")
  %w3 = gopt.constant dense<[[0.4, -0.2, 0.1, 0.3], [0.2, 0.3, -0.1, 0.1], [-0.3, 0.1, 0.2, 0.2]]> : tensor<3x4xf32> loc("w3")
  %w4 = gopt.constant dense<[[[0.3, -0.1], [0.2, 0.2], [-0.2, 0.4], [0.1, -0.3]]]> : tensor<1x4x2xf32> loc("w4")
  %w5 = gopt.constant dense<[[0.5, -0.2], [0.1, 0.3], [-0.4, 0.2], [0.2, 0.1], [0.3, -0.3]]> : tensor<5x2xf32> loc("w5")
  %w6 = gopt.constant dense<[[0.2, -0.1, 0.3], [0.1, 0.2, -0.2], [-0.3, 0.1, 0.2], [0.2, 0.2, 0.1], [0.1, -0.2, 0.3], [0.3, 0.1, -0.1], [-0.1, 0.3, 0.2], [0.2, -0.1, 0.1], [0.1, 0.2, 0.2], [-0.2, 0.1, 0.3]]> : tensor<10x3xf32> loc("w6")
  %0 = gopt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  %1 = gopt.gelu %0 : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %2 = gopt.matmul %1, %w2 : (tensor<?x6xf32>, tensor<6x6xf32>) -> tensor<?x6xf32>
  %3 = gopt.gelu %2 {approximate = "tanh"} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %4 = gopt.erf %3 : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %5 = gopt.reshape %4 {shape = array<i64: -1, 2, 3>} : (tensor<?x6xf32>) -> tensor<?x2x3xf32>
  // [?,2,3] @ [3,4]: the weight broadcasts over the batch.
  %6 = gopt.matmul %5, %w3 : (tensor<?x2x3xf32>, tensor<3x4xf32>) -> tensor<?x2x4xf32>
  %7 = gopt.tanh %6 : (tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  // [?,2,4] @ [1,4,2]: a size-1 batch dim.
  %8 = gopt.matmul %7, %w4 : (tensor<?x2x4xf32>, tensor<1x4x2xf32>) -> tensor<?x2x2xf32>
  // [5,2] @ [?,2,2]: the left operand broadcasts.
  %9 = gopt.matmul %w5, %8 : (tensor<5x2xf32>, tensor<?x2x2xf32>) -> tensor<?x5x2xf32>
  %10 = gopt.reshape %9 {shape = array<i64: -1, 10>} : (tensor<?x5x2xf32>) -> tensor<?x10xf32>
  %11 = gopt.matmul %10, %w6 : (tensor<?x10xf32>, tensor<10x3xf32>) -> tensor<?x3xf32>
  return %11 : tensor<?x3xf32>
}
