// RUN: gopt-run %s --grad-check --loss none --batch 3 | FileCheck %s

/// Autodiff of layer_norm (over the last axis, and over two axes with a
/// broadcast scale and bias), instance_norm, pow (both operands computed)
/// and reduce_max / reduce_min against finite differences on the reference
/// kernels. The norms' scales and biases are parameters (their ODS lists
/// them as trainable); x's gradient reaches w1 through every op.
// CHECK: grad-check
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: ln.scale {{.*}}: ok
// CHECK-DAG: ln.bias {{.*}}: ok
// CHECK-DAG: ln2.scale {{.*}}: ok
// CHECK-DAG: ln2.bias {{.*}}: ok
// CHECK-DAG: in.scale {{.*}}: ok
// CHECK-DAG: in.bias {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}, %t: tensor<?x2xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2, 0.1, 0.7, -0.45], [0.4, 0.15, -0.6, 0.3, -0.25, 0.35], [-0.2, 0.5, 0.3, -0.4, 0.05, 0.6]]> : tensor<3x6xf32> loc("w1")
  %g1 = gopt.constant dense<[1.2, 0.8, -0.5]> : tensor<3xf32> loc("ln.scale")
  %b1 = gopt.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32> loc("ln.bias")
  %g2 = gopt.constant dense<[0.9, 1.1, 0.7]> : tensor<3xf32> loc("ln2.scale")
  %b2 = gopt.constant dense<[[0.05], [-0.1]]> : tensor<2x1xf32> loc("ln2.bias")
  %gi = gopt.constant dense<[1.3, -0.6]> : tensor<2xf32> loc("in.scale")
  %bi = gopt.constant dense<[0.2, 0.4]> : tensor<2xf32> loc("in.bias")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.5, 0.1, 0.25, -0.35], [-0.4, 0.2, 0.1, 0.6, -0.15, 0.45]]> : tensor<2x6xf32> loc("w2")
  %half = gopt.constant dense<0.5> : tensor<f32>
  %h = gopt.matmul %x, %w1 : (tensor<?x3xf32>, tensor<3x6xf32>) -> tensor<?x6xf32>
  %h3 = gopt.reshape %h {shape = array<i64: -1, 2, 3>} : (tensor<?x6xf32>) -> tensor<?x2x3xf32>
  %ln = gopt.layer_norm %h3, %g1, %b1 {axis = -1 : i64} : (tensor<?x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x2x3xf32>
  %ln2 = gopt.layer_norm %h3, %g2, %b2 {axis = 1 : i64} : (tensor<?x2x3xf32>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<?x2x3xf32>
  %in = gopt.instance_norm %h3, %gi, %bi {data_format = "NCHW"} : (tensor<?x2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3xf32>
  %sg = gopt.sigmoid %h3 : (tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %base = gopt.add %sg, %half : (tensor<?x2x3xf32>, tensor<f32>) -> tensor<?x2x3xf32>
  // A computed exponent: both of pow's gradients reach w1.
  %th = gopt.tanh %h3 : (tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %e = gopt.add %th, %half : (tensor<?x2x3xf32>, tensor<f32>) -> tensor<?x2x3xf32>
  %pw = gopt.pow %base, %e : (tensor<?x2x3xf32>, tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %mn = gopt.reduce_min %h3 {axes = array<i64: 1>, keep_dims = true} : (tensor<?x2x3xf32>) -> tensor<?x1x3xf32>
  %s0 = gopt.add %ln, %ln2 : (tensor<?x2x3xf32>, tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %s1 = gopt.add %s0, %in : (tensor<?x2x3xf32>, tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %s2 = gopt.add %s1, %pw : (tensor<?x2x3xf32>, tensor<?x2x3xf32>) -> tensor<?x2x3xf32>
  %s3 = gopt.add %s2, %mn : (tensor<?x2x3xf32>, tensor<?x1x3xf32>) -> tensor<?x2x3xf32>
  %f = gopt.reshape %s3 {shape = array<i64: -1, 6>} : (tensor<?x2x3xf32>) -> tensor<?x6xf32>
  %o = gopt.matmul %f, %w2 {transpose_b = true} : (tensor<?x6xf32>, tensor<2x6xf32>) -> tensor<?x2xf32>
  %mx = gopt.reduce_max %h3 {axes = array<i64: 2>} : (tensor<?x2x3xf32>) -> tensor<?x2xf32>
  %o2 = gopt.add %o, %mx : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %loss = gopt.mse_loss %o2, %t : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
