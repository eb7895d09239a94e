// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of det (det(x) * matrix_inverse(x)^T) and matrix_inverse
/// (-Y^T dy Y^T) against finite differences, batched [2, 3, 3] and a
/// single [2, 2] matrix; the named constants shift the inputs, so their
/// gradients are the ops' input gradients.
// CHECK: grad-check
// CHECK-DAG: m.b {{.*}}: ok
// CHECK-DAG: s.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%m: tensor<2x3x3xf32> {gopt.name = "m"}, %s: tensor<2x2xf32> {gopt.name = "s"}, %t1: tensor<2xf32> {gopt.name = "t1"}, %t2: tensor<2x3x3xf32> {gopt.name = "t2"}, %t3: tensor<f32> {gopt.name = "t3"}, %t4: tensor<2x2xf32> {gopt.name = "t4"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %m_b = gopt.constant dense<[[[1.805, 0.308, 0.015], [-0.214, 1.054, -0.117], [-0.092, -0.455, 1.049]], [[1.999, 0.152, -0.265], [-0.065, 1.974, 0.398], [0.344, -0.108, 1.493]]]> : tensor<2x3x3xf32> loc("m.b")
  %s_b = gopt.constant dense<[[1.177, -0.439], [0.056, 0.771]]> : tensor<2x2xf32> loc("s.b")
  %small = gopt.constant dense<0.05> : tensor<f32>
  %ms = gopt.mul %m, %small : (tensor<2x3x3xf32>, tensor<f32>) -> tensor<2x3x3xf32>
  %ss = gopt.mul %s, %small : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %x = gopt.add %ms, %m_b : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %y = gopt.add %ss, %s_b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %d1 = gopt.det %x : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %i1 = gopt.matrix_inverse %x : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %d2 = gopt.det %y : (tensor<2x2xf32>) -> tensor<f32>
  %i2 = gopt.matrix_inverse %y : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %l1 = gopt.mse_loss %d1, %t1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  %l2 = gopt.mse_loss %i1, %t2 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<f32>
  %l3 = gopt.mse_loss %d2, %t3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %l4 = gopt.mse_loss %i2, %t4 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
  %a = gopt.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %b = gopt.add %a, %l3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %loss = gopt.add %b, %l4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
