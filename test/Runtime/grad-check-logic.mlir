// RUN: gopt-run %s --grad-check --batch 3 | FileCheck %s

/// Autodiff of where (each branch gets the gradient where it was chosen; the
/// [1, 3] branch summed over the batch it was broadcast along), expand
/// (summed over the broadcast dimension) and tile (the copies summed)
/// against finite differences. The comparison deciding the branch carries no
/// gradient. The parameters reach the loss only through these ops.
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: b1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2], [0.4, 0.1, -0.6], [-0.2, 0.5, 0.3], [0.3, -0.1, 0.4]]> : tensor<4x3xf32> loc("w1")
  %b1 = gopt.constant dense<[0.1, -0.2, 0.05]> : tensor<3xf32> loc("b1")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.5], [-0.4, 0.2, 0.1], [0.1, 0.3, -0.2], [0.2, -0.1, 0.4], [-0.3, 0.4, 0.1], [0.1, 0.2, -0.3]]> : tensor<6x3xf32> loc("w2")
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %m = gopt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %h = gopt.add %m, %b1 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %row = gopt.reduce_mean %h {axes = array<i64: 1>, keep_dims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>
  %ex = gopt.expand %row {shape = array<i64: 1, 3>} : (tensor<?x1xf32>) -> tensor<?x3xf32>
  %col = gopt.reduce_mean %w1 {axes = array<i64: 0>, keep_dims = true} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %positive = gopt.greater %h, %zero : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xi1>
  %z = gopt.where %positive, %ex, %col : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %tl = gopt.tile %h {repeats = array<i64: 1, 2>} : (tensor<?x3xf32>) -> tensor<?x6xf32>
  %t = gopt.matmul %tl, %w2 : (tensor<?x6xf32>, tensor<6x3xf32>) -> tensor<?x3xf32>
  %y = gopt.add %z, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
