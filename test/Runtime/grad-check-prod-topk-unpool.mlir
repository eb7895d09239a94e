// RUN: gopt-run %s --grad-check --loss none --batch 3 --atol 2e-3 --rtol 0.01 --epsilon 0.003 | FileCheck %s

/// Autodiff of reduce_prod (rows without a zero, with one and with two:
/// pa - pb is exactly 0 where they agree, yet depends on both), top_k,
/// dynamic_top_k, dynamic_cumsum, max_pool_with_indices (overlapping
/// windows: one element can be picked twice), max_unpool and mod (fmod 0
/// and 1, with a computed divisor) against finite differences. A step of
/// 0.003 rather than 0.01: the pools' maxima and mod's quotients change
/// within the larger one; the smaller step resolves the f32 loss (about
/// 66) to about 1e-3, hence atol.
// CHECK: grad-check
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK-DAG: w3 {{.*}}: ok
// CHECK-DAG: pa {{.*}}: ok
// CHECK-DAG: pb {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}, %t: tensor<?x2xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w1 = gopt.constant dense<[[-0.06, 0.07, 0.51, -0.04, 0.01, 0.10, -0.38, 0.01, 0.16, 0.35, -0.49, -0.24, -0.49, 0.37, 0.23, -0.55, 0.58, 0.56, 0.18, 0.14, -0.41, -0.58, 0.03, -0.53], [-0.37, -0.31, -0.56, -0.04, -0.07, 0.41, 0.02, 0.17, -0.00, 0.19, -0.05, -0.27, 0.60, 0.59, 0.41, 0.25, -0.22, -0.32, -0.25, -0.52, 0.32, -0.12, 0.42, -0.14], [0.55, 0.42, -0.60, -0.35, 0.49, -0.04, 0.58, -0.12, -0.51, 0.16, 0.33, -0.28, -0.50, -0.20, 0.56, 0.31, -0.46, -0.30, -0.48, -0.53, 0.36, -0.39, 0.07, -0.06], [-0.37, 0.28, -0.44, 0.17, -0.46, -0.10, -0.34, -0.28, 0.57, 0.36, -0.24, 0.46, -0.35, -0.13, 0.43, 0.17, -0.48, 0.59, -0.34, -0.29, 0.33, -0.21, -0.24, -0.51]]> : tensor<4x24xf32> loc("w1")
  %w2 = gopt.constant dense<[[-0.49, 0.10, -0.31, 0.12, -0.15, -0.06, 0.55, -0.02, 0.09, 0.44, -0.38, -0.42, 0.49, 0.38, -0.30, -0.37, 0.29, 0.53, -0.36, 0.54, 0.46, 0.12, -0.09, -0.48], [-0.55, 0.56, -0.31, 0.25, -0.29, 0.39, 0.12, -0.25, -0.39, 0.26, -0.52, -0.33, 0.07, 0.42, 0.14, -0.26, 0.50, -0.36, -0.58, -0.28, -0.07, -0.53, -0.39, -0.16]]> : tensor<2x24xf32> loc("w2")
  %w3 = gopt.constant dense<[[0.09, -0.44, -0.17, 0.47, 0.58, 0.19, 0.23, 0.10, -0.43, -0.56, -0.58, 0.49, 0.24, 0.56, -0.57, 0.16, -0.02, 0.28, -0.22, 0.60, -0.51, 0.06, 0.28, 0.48], [0.28, 0.24, 0.35, 0.50, -0.18, 0.22, 0.48, 0.45, -0.10, 0.35, 0.44, 0.09, 0.15, -0.14, 0.10, 0.13, -0.50, 0.17, 0.59, 0.46, 0.27, -0.13, 0.28, 0.10], [-0.07, 0.41, -0.50, 0.30, -0.56, 0.12, -0.02, -0.32, 0.24, -0.00, 0.14, 0.50, -0.29, -0.59, -0.24, 0.21, -0.36, -0.40, 0.49, 0.19, -0.07, 0.47, -0.21, 0.20], [-0.36, -0.08, 0.37, 0.50, 0.46, -0.14, 0.10, -0.22, -0.44, -0.00, 0.40, 0.42, 0.25, 0.54, -0.27, -0.40, -0.06, -0.27, -0.34, -0.10, 0.15, -0.01, -0.22, 0.41]]> : tensor<4x24xf32> loc("w3")
  %pa = gopt.constant dense<[[0.5, -0.3, 0.2], [0.4, 0.1, -0.6], [-0.2, 0.5, 0.3], [0.3, 0.7, 0.2]]> : tensor<4x3xf32> loc("pa")
  %pb = gopt.constant dense<[[0.1, -0.7, 0.9], [0.4, 0.3, -0.5], [-0.2, 0.2, 0.3], [0.1, 0.4, 0.6]]> : tensor<4x3xf32> loc("pb")
  %one = gopt.constant dense<1.0> : tensor<f32>
  %h = gopt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x24xf32>) -> tensor<?x24xf32>
  %h3 = gopt.matmul %x, %w3 : (tensor<?x4xf32>, tensor<4x24xf32>) -> tensor<?x24xf32>
  // top_k along the last axis.
  %v, %i = gopt.top_k %h {k = 5 : i64} : (tensor<?x24xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
  %vs = gopt.sin %v : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %tk0 = gopt.reduce_sum %vs {axes = array<i64: 1>, keep_dims = true} : (tensor<?x5xf32>) -> tensor<?x1xf32>
  // The same with k and a cumsum's axis as operands (dynamic_top_k,
  // dynamic_cumsum: differentiated before canonicalization folds them).
  %kk = gopt.constant dense<[3]> : tensor<1xi64>
  %dv, %di = gopt.dynamic_top_k %h3, %kk {largest = false} : (tensor<?x24xf32>, tensor<1xi64>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
  %ax = gopt.constant dense<1> : tensor<i64>
  %dc = gopt.dynamic_cumsum %dv, %ax {reverse = true} : (tensor<?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
  %dcs = gopt.sin %dc : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %tk1 = gopt.reduce_sum %dcs {axes = array<i64: 1>, keep_dims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>
  %tk = gopt.add %tk0, %tk1 : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  // Overlapping 2x2 windows, stride 1, over [?, 2, 3, 4].
  %img = gopt.reshape %h {shape = array<i64: -1, 2, 3, 4>} : (tensor<?x24xf32>) -> tensor<?x2x3x4xf32>
  %p, %pi = gopt.max_pool_with_indices %img {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x2x3x4xf32>) -> (tensor<?x2x2x3xf32>, tensor<?x2x2x3xi64>)
  %ps = gopt.sin %p : (tensor<?x2x2x3xf32>) -> tensor<?x2x2x3xf32>
  %pf = gopt.reshape %ps {shape = array<i64: -1, 12>} : (tensor<?x2x2x3xf32>) -> tensor<?x12xf32>
  // Disjoint 2x2 windows, pooled and unpooled: every position once.
  %img2 = gopt.reshape %h3 {shape = array<i64: -1, 2, 2, 6>} : (tensor<?x24xf32>) -> tensor<?x2x2x6xf32>
  %q, %qi = gopt.max_pool_with_indices %img2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x2x2x6xf32>) -> (tensor<?x2x1x3xf32>, tensor<?x2x1x3xi64>)
  %qt = gopt.tanh %q : (tensor<?x2x1x3xf32>) -> tensor<?x2x1x3xf32>
  %un = gopt.max_unpool %qt, %qi {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<?x2x1x3xf32>, tensor<?x2x1x3xi64>) -> tensor<?x2x2x6xf32>
  %uns = gopt.sin %un : (tensor<?x2x2x6xf32>) -> tensor<?x2x2x6xf32>
  %uf = gopt.reshape %uns {shape = array<i64: -1, 24>} : (tensor<?x2x2x6xf32>) -> tensor<?x24xf32>
  // mod by 1.5 + sigmoid(h3): both operands computed.
  %sg = gopt.sigmoid %h3 : (tensor<?x24xf32>) -> tensor<?x24xf32>
  %half = gopt.constant dense<1.5> : tensor<f32>
  %div = gopt.add %sg, %half : (tensor<?x24xf32>, tensor<f32>) -> tensor<?x24xf32>
  %m0 = gopt.mod %h, %div : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %m1 = gopt.mod %h, %div {fmod = 1 : i64} : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %m = gopt.add %m0, %m1 : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %a0 = gopt.add %m, %uf : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %o = gopt.matmul %a0, %w2 {transpose_b = true} : (tensor<?x24xf32>, tensor<2x24xf32>) -> tensor<?x2xf32>
  %pr = gopt.reduce_sum %pf {axes = array<i64: 1>, keep_dims = true} : (tensor<?x12xf32>) -> tensor<?x1xf32>
  %o1 = gopt.add %o, %tk : (tensor<?x2xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
  %o2 = gopt.add %o1, %pr : (tensor<?x2xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
  // reduce_prod of pa - pb: rows 0 and 3 have no zero, row 1 one, row 2
  // two; over axis 1 and over everything (of pa - pb + 1).
  // 0 * (computed) + pa - pb: pa and pb are parameters (an add's and a
  // sub's other operand is computed; pa is a matmul's weight too), the
  // zeros exact.
  %mix = gopt.constant dense<[[0.9, -0.4, 0.3, 0.2], [0.1, 0.8, -0.5, 0.3], [-0.3, 0.2, 0.7, 0.6], [0.5, 0.1, 0.2, -0.8]]> : tensor<4x4xf32>
  %h43 = gopt.matmul %mix, %pa : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %z0 = gopt.mul %h43, %zero : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %ea = gopt.add %z0, %pa : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %d = gopt.sub %ea, %pb : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %d1 = gopt.add %d, %one : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %rp = gopt.reduce_prod %d {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %rps = gopt.sin %rp : (tensor<4xf32>) -> tensor<4xf32>
  %rpa = gopt.reduce_sum %rps {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %ra = gopt.reduce_prod %d1 {axes = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
  %r = gopt.add %rpa, %ra : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %o3 = gopt.add %o2, %r : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %loss = gopt.mse_loss %o3, %t : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
