// RUN: gopt-run %s --grad-check --loss none --batch 3 | FileCheck %s

/// Autodiff of the GoptMathOps.td family (each op's generated `_grad` op and
/// prelu's two gradients) against finite differences on the reference
/// kernels. Inputs stay clear of each function's kinks.
// CHECK: grad-check
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: slope {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}, %t: tensor<?x2xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2, 0.1], [0.4, 0.1, -0.6, 0.3], [-0.2, 0.5, 0.3, -0.4]]> : tensor<3x4xf32> loc("w1")
  %slope = gopt.constant dense<[0.1, 0.3, -0.2, 0.25]> : tensor<4xf32> loc("slope")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.5, 0.1], [-0.4, 0.2, 0.1, 0.6]]> : tensor<2x4xf32> loc("w2")
  %one = gopt.constant dense<1.0> : tensor<f32>
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %h = gopt.matmul %x, %w1 : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %a = gopt.hard_sigmoid %h {alpha = 0.1 : f32, beta = 0.5 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %b = gopt.hard_swish %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c = gopt.softplus %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %d = gopt.softsign %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %e = gopt.elu %h {alpha = 0.7 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %f = gopt.selu %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %g = gopt.celu %h {alpha = 1.5 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = gopt.mish %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %cp0 = gopt.add %c, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %sin = gopt.sin %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %cos = gopt.cos %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %at = gopt.atan %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %ash = gopt.asinh %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %l1p = gopt.log1p %cp0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %cp = gopt.add %c, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %r = gopt.reciprocal %cp : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %p = gopt.prelu %h, %slope : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // Zero gradients: autodiff must pass through them, not fail (times 0, so
  // floor's steps do not reach the finite differences).
  %fl = gopt.floor %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %s0 = gopt.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s1 = gopt.add %s0, %d : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s2 = gopt.add %s1, %e : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s3 = gopt.add %s2, %f : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s4 = gopt.add %s3, %g : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s5 = gopt.add %s4, %m : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s6 = gopt.add %s5, %sin : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s7 = gopt.add %s6, %cos : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s8 = gopt.add %s7, %r : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s9 = gopt.add %s8, %p : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %t0 = gopt.add %at, %ash : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %t1 = gopt.add %t0, %l1p : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s9b = gopt.add %s9, %t1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %s10 = gopt.mul %fl, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %s11 = gopt.add %s9b, %s10 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %o = gopt.matmul %s11, %w2 {transpose_b = true} : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  %loss = gopt.mse_loss %o, %t : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
