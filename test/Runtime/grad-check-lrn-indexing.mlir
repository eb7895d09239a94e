// RUN: gopt-run %s --grad-check --loss none --batch 3 --atol 2e-5 --rtol 0.01 | FileCheck %s

/// Autodiff of lrn (NCHW with an even size, whose window is lopsided, and
/// NHWC), dynamic_reshape to a shape known at run time, gather_elements
/// (a repeated index: the gradients add), gather_nd, and scatter_elements /
/// scatter_nd with and without "add" (x's gradient zeroed where an update
/// replaced it, the updates' gathered from dy), against finite differences.
// CHECK: grad-check
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK-DAG: w3 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}, %t: tensor<?x2xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w1 = gopt.constant dense<[[-0.21, -0.42, 0.18, -0.51, 0.04, -0.16, -0.53, 0.01, -0.56, -0.08, -0.52, -0.49, -0.09, 0.39, -0.45, -0.33, 0.15, 0.54, 0.09, -0.12, 0.57, -0.54, 0.43, -0.25], [-0.43, -0.46, -0.23, 0.38, -0.38, 0.10, 0.17, -0.15, 0.06, -0.52, -0.53, -0.35, 0.22, -0.09, -0.22, 0.10, -0.06, -0.24, 0.35, 0.24, -0.31, 0.09, 0.03, 0.45], [0.28, -0.25, 0.58, -0.46, -0.10, 0.31, -0.42, -0.01, -0.55, 0.20, 0.32, 0.09, 0.45, -0.22, 0.23, 0.11, 0.10, -0.05, 0.41, 0.53, -0.03, 0.20, -0.53, 0.24], [0.18, 0.59, 0.39, -0.26, -0.14, 0.20, -0.57, -0.05, -0.40, -0.46, -0.53, 0.32, -0.44, -0.30, -0.13, 0.45, -0.50, -0.06, 0.06, 0.46, 0.38, 0.44, -0.27, -0.10]]> : tensor<4x24xf32> loc("w1")
  %w3 = gopt.constant dense<[[0.7, -0.2, 0.4, 0.1, -0.6, 0.3], [0.2, 0.5, -0.3, 0.6, 0.1, -0.4], [-0.5, 0.3, 0.2, -0.1, 0.4, 0.6], [0.3, -0.6, 0.5, 0.2, -0.3, 0.1]]> : tensor<4x6xf32> loc("w3")
  %w2 = gopt.constant dense<[[-0.17, 0.46, 0.55, -0.42, -0.39, -0.32, -0.32, -0.02, 0.11, -0.28, -0.60, -0.10, -0.16, 0.08, 0.54, 0.23, 0.02, 0.14, 0.21, -0.54, 0.48, 0.34, 0.45, 0.36], [-0.13, -0.12, -0.48, 0.16, -0.53, -0.52, -0.35, -0.41, -0.19, -0.54, -0.60, -0.42, -0.48, -0.16, -0.57, 0.45, 0.14, -0.42, -0.30, -0.18, -0.16, -0.45, 0.42, 0.59]]> : tensor<2x24xf32> loc("w2")
  %ige = gopt.constant dense<[[0, 5, 0], [2, 2, 1], [4, 3, 5], [1, 0, 2]]> : tensor<4x3xi64>
  %ign = gopt.constant dense<[[1, 2], [3, 5], [1, 2]]> : tensor<3x2xi64>
  %ise = gopt.constant dense<[[1, 4], [0, 5], [3, 2], [5, 0]]> : tensor<4x2xi64>
  %isn = gopt.constant dense<[[3], [1]]> : tensor<2x1xi64>
  %h = gopt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x24xf32>) -> tensor<?x24xf32>
  %nchw = gopt.reshape %h {shape = array<i64: -1, 6, 2, 2>} : (tensor<?x24xf32>) -> tensor<?x6x2x2xf32>
  %l1 = gopt.lrn %nchw {size = 4 : i64, alpha = 0.5 : f32, beta = 0.75 : f32, bias = 1.0 : f32, data_format = "NCHW"} : (tensor<?x6x2x2xf32>) -> tensor<?x6x2x2xf32>
  %nhwc = gopt.reshape %h {shape = array<i64: -1, 2, 2, 6>} : (tensor<?x24xf32>) -> tensor<?x2x2x6xf32>
  %l2 = gopt.lrn %nhwc {size = 3 : i64, alpha = 0.8 : f32, beta = 0.6 : f32, bias = 2.0 : f32, data_format = "NHWC"} : (tensor<?x2x2x6xf32>) -> tensor<?x2x2x6xf32>
  // shape(%h) is known only at run time: the reshape stays dynamic.
  %hs = gopt.shape %h : (tensor<?x24xf32>) -> tensor<2xi64>
  %r1 = gopt.dynamic_reshape %l1, %hs : (tensor<?x6x2x2xf32>, tensor<2xi64>) -> tensor<?x24xf32>
  %r2 = gopt.reshape %l2 {shape = array<i64: -1, 24>} : (tensor<?x2x2x6xf32>) -> tensor<?x24xf32>
  %sum = gopt.add %r1, %r2 : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %o = gopt.matmul %sum, %w2 {transpose_b = true} : (tensor<?x24xf32>, tensor<2x24xf32>) -> tensor<?x2xf32>
  // Static [4, 6] features for the indexing ops.
  %mix = gopt.constant dense<[[0.9, -0.4, 0.3, 0.2], [0.1, 0.8, -0.5, 0.3], [-0.3, 0.2, 0.7, 0.6], [0.5, 0.1, 0.2, -0.8]]> : tensor<4x4xf32>
  %s46 = gopt.matmul %mix, %w3 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %f = gopt.tanh %s46 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %u = gopt.slice %f {starts = array<i64: 0, 1>, ends = array<i64: 4, 3>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %un = gopt.slice %f {starts = array<i64: 1, 0>, ends = array<i64: 3, 6>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %u2 = gopt.mul %u, %u : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %un2 = gopt.sin %un : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %ge = gopt.gather_elements %f, %ige {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  %gn = gopt.gather_nd %f, %ign : (tensor<4x6xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %se = gopt.scatter_elements %f, %ise, %u2 {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
  %sea = gopt.scatter_elements %f, %ise, %u2 {axis = 1 : i64, reduction = "add"} : (tensor<4x6xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
  %sn = gopt.scatter_nd %f, %isn, %un2 : (tensor<4x6xf32>, tensor<2x1xi64>, tensor<2x6xf32>) -> tensor<4x6xf32>
  %sna = gopt.scatter_nd %f, %isn, %un2 {reduction = "add"} : (tensor<4x6xf32>, tensor<2x1xi64>, tensor<2x6xf32>) -> tensor<4x6xf32>
  // Sines weigh the elements unevenly, so a gradient at the wrong place shows.
  %ge1 = gopt.sin %ge : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %gn1 = gopt.sin %gn : (tensor<3xf32>) -> tensor<3xf32>
  %se1 = gopt.sin %se : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %sea1 = gopt.cos %sea : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %sn1 = gopt.sin %sn : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %sna1 = gopt.cos %sna : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %a = gopt.reduce_sum %ge1 {axes = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
  %b = gopt.reduce_sum %gn1 {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %m0 = gopt.add %se1, %sea1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %m1 = gopt.add %m0, %sn1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %m2 = gopt.add %m1, %sna1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = gopt.reduce_sum %m2 {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  %ab = gopt.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %abc = gopt.add %ab, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %o2 = gopt.add %o, %abc : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %loss = gopt.mse_loss %o2, %t : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
