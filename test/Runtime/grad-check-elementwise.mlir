// RUN: gopt-run %s --grad-check --loss none --batch 3 | FileCheck %s

/// Autodiff of elementwise math, broadcasting, shape ops and reductions,
/// checked against finite differences of the loss on the reference kernels.
// CHECK: grad-check
// CHECK-DAG: w1 12 values, 8 checked, {{.*}}: ok
// CHECK-DAG: b1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK-DAG: scale {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}, %t: tensor<?x2xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2, 0.1], [0.4, 0.1, -0.6, 0.3], [-0.2, 0.5, 0.3, -0.4]]> : tensor<3x4xf32> loc("w1")
  %b1 = gopt.constant dense<[0.1, -0.2, 0.3, 0.05]> : tensor<4xf32> loc("b1")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.5, 0.1], [-0.4, 0.2, 0.1, 0.6]]> : tensor<2x4xf32> loc("w2")
  %scale = gopt.constant dense<[[1.5], [0.5], [-1.0], [2.0]]> : tensor<4x1xf32> loc("scale")
  %one = gopt.constant dense<1.0> : tensor<f32>
  %0 = gopt.matmul %x, %w1 : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %1 = gopt.add %0, %b1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %s = gopt.sigmoid %1 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %th = gopt.tanh %1 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %e = gopt.exp %th : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %p = gopt.add %s, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %l = gopt.log %p : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %q = gopt.sqrt %p : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %d = gopt.div %e, %q : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %n = gopt.neg %l : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %u = gopt.sub %d, %n : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // [?,4] -> [4,?] - [4,1] (broadcast, a parameter) -> squared -> back
  %tr = gopt.transpose %u {perm = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %sh = gopt.sub %tr, %scale : (tensor<4x?xf32>, tensor<4x1xf32>) -> tensor<4x?xf32>
  %sc = gopt.mul %sh, %tr : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  %back = gopt.transpose %sc {perm = array<i64: 1, 0>} : (tensor<4x?xf32>) -> tensor<?x4xf32>
  %r = gopt.reshape %back {shape = array<i64: -1, 2, 2>} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
  %m = gopt.reduce_mean %r {axes = array<i64: 2>, keep_dims = true} : (tensor<?x2x2xf32>) -> tensor<?x2x1xf32>
  %f = gopt.reshape %m {shape = array<i64: -1, 2>} : (tensor<?x2x1xf32>) -> tensor<?x2xf32>
  %o = gopt.matmul %u, %w2 {transpose_b = true} : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  %sum = gopt.add %f, %o : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %loss = gopt.mse_loss %sum, %t : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

/// With zero tolerance finite differences never match exactly: the check
/// reports the mismatch and fails.
// RUN: not gopt-run %s --grad-check --loss none --batch 3 --atol 0 --rtol 0 | FileCheck %s --check-prefix=STRICT
// STRICT: MISMATCH w2[{{[0-9]+}}]: autodiff {{.*}}, finite difference
// STRICT: GRADIENT MISMATCH
