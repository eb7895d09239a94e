// RUN: gopt-run %s --grad-check --loss none --atol 1e-4 --rtol 1e-3 | FileCheck %s

/// Autodiff of cumsum (the cumsum of dy the other way) in its four forms
/// against finite differences; the loss is quadratic in the parameters, so
/// central differences are exact up to f32 rounding.
// CHECK: grad-check
// CHECK-DAG: w {{.*}}: ok
// CHECK-DAG: v {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<3x5xf32> {gopt.name = "x"}, %t: tensor<3x5xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w = gopt.constant dense<[0.3, -0.2, 0.5, 0.1, -0.4]> : tensor<5xf32> loc("w")
  %v = gopt.constant dense<[[0.2], [-0.1], [0.4]]> : tensor<3x1xf32> loc("v")
  %h = gopt.add %x, %w : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %a = gopt.cumsum %h {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %b = gopt.cumsum %h {axis = -1 : i64, exclusive = true} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %c = gopt.cumsum %h {axis = 1 : i64, reverse = true} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %d = gopt.cumsum %h {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  // Along the batch axis too (v is added per row).
  %hv = gopt.add %h, %v : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %e = gopt.cumsum %hv {axis = 0 : i64, reverse = true} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %s0 = gopt.add %a, %b : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s1 = gopt.add %s0, %c : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s2 = gopt.add %s1, %d : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %s3 = gopt.add %s2, %e : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %loss = gopt.mse_loss %s3, %t : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
