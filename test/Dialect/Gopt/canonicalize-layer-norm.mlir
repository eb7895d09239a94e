// RUN: gopt-opt %s -canonicalize -split-input-file | FileCheck %s
// The values are checked by test/Transforms/numeric/fuse-layer-norm.mlir.

/// Layer norm as PyTorch exports it before opset 17 (ReduceMean, Sub, Pow 2,
/// ReduceMean, Add eps, Sqrt, Div, then Mul gamma and Add beta) becomes one
/// layer_norm that takes gamma and beta, computing the same values.
// CHECK-LABEL: func.func @torch_layer_norm
// CHECK-DAG: %[[GAMMA:.*]] = gopt.constant dense<[{{.*}}]> : tensor<4xf32>
// CHECK-DAG: %[[BETA:.*]] = gopt.constant dense<[{{.*}}]> : tensor<4xf32>
// CHECK: %[[Y:.*]] = gopt.layer_norm %arg0, %[[GAMMA]], %[[BETA]] {axis = 2 : i64} :
// CHECK-NEXT: return %[[Y]]
func.func @torch_layer_norm(%x: tensor<3x5x4xf32>) -> tensor<3x5x4xf32> {
  %two = gopt.constant dense<2.0> : tensor<f32>
  %eps = gopt.constant dense<1.0e-5> : tensor<f32>
  %gamma = gopt.constant dense<[1.5, -0.5, 2.0, 0.25]> : tensor<4xf32>
  %beta = gopt.constant dense<[0.1, 0.2, -0.3, 0.0]> : tensor<4xf32>
  %mean = gopt.reduce_mean %x {axes = array<i64: -1>, keep_dims = true} : (tensor<3x5x4xf32>) -> tensor<3x5x1xf32>
  %d = gopt.sub %x, %mean : (tensor<3x5x4xf32>, tensor<3x5x1xf32>) -> tensor<3x5x4xf32>
  %sq = gopt.pow %d, %two : (tensor<3x5x4xf32>, tensor<f32>) -> tensor<3x5x4xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: -1>, keep_dims = true} : (tensor<3x5x4xf32>) -> tensor<3x5x1xf32>
  %shifted = gopt.add %var, %eps : (tensor<3x5x1xf32>, tensor<f32>) -> tensor<3x5x1xf32>
  %std = gopt.sqrt %shifted : (tensor<3x5x1xf32>) -> tensor<3x5x1xf32>
  %n = gopt.div %d, %std : (tensor<3x5x4xf32>, tensor<3x5x1xf32>) -> tensor<3x5x4xf32>
  %scaled = gopt.mul %n, %gamma : (tensor<3x5x4xf32>, tensor<4xf32>) -> tensor<3x5x4xf32>
  %y = gopt.add %scaled, %beta : (tensor<3x5x4xf32>, tensor<4xf32>) -> tensor<3x5x4xf32>
  return %y : tensor<3x5x4xf32>
}

// -----

/// TensorFlow's hand-written form: squared_difference for the variance,
/// rsqrt times the centered values, over the two trailing axes, gamma with
/// leading unit dimensions.
// CHECK-LABEL: func.func @tf_layer_norm
// CHECK: %[[G:.*]] = gopt.constant dense<2.000000e+00> : tensor<5x4xf32>
// CHECK: gopt.layer_norm %arg0, %[[G]], %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
// CHECK-NOT: gopt.rsqrt
func.func @tf_layer_norm(%x: tensor<3x5x4xf32>) -> tensor<3x5x4xf32> {
  %eps = gopt.constant dense<1.0e-3> : tensor<1xf32>
  %gamma = gopt.constant dense<2.0> : tensor<1x5x4xf32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<3x5x4xf32>) -> tensor<3x1x1xf32>
  %var = gopt.squared_difference %x, %mean : (tensor<3x5x4xf32>, tensor<3x1x1xf32>) -> tensor<3x5x4xf32>
  %v = gopt.reduce_mean %var {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<3x5x4xf32>) -> tensor<3x1x1xf32>
  %d = gopt.sub %x, %mean : (tensor<3x5x4xf32>, tensor<3x1x1xf32>) -> tensor<3x5x4xf32>
  %shifted = gopt.add %eps, %v : (tensor<1xf32>, tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %inv = gopt.rsqrt %shifted : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %n = gopt.mul %inv, %d : (tensor<3x1x1xf32>, tensor<3x5x4xf32>) -> tensor<3x5x4xf32>
  %y = gopt.mul %n, %gamma : (tensor<3x5x4xf32>, tensor<1x5x4xf32>) -> tensor<3x5x4xf32>
  return %y : tensor<3x5x4xf32>
}

// -----

/// Not a layer norm: the mean is over a leading axis, and a scale that
/// varies along the batch cannot be absorbed. Both stay as written.
// CHECK-LABEL: func.func @not_trailing
// CHECK-NOT: gopt.layer_norm
// CHECK: gopt.div
// CHECK-LABEL: func.func @batch_varying_scale
// CHECK: %[[LN:.*]] = gopt.layer_norm %arg0
// CHECK: gopt.mul %[[LN]], %arg1
func.func @not_trailing(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %eps = gopt.constant dense<1.0e-5> : tensor<f32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 0>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  %d = gopt.sub %x, %mean : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %sq = gopt.mul %d, %d : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 0>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  %shifted = gopt.add %var, %eps : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %std = gopt.sqrt %shifted : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = gopt.div %d, %std : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %n : tensor<3x4xf32>
}
func.func @batch_varying_scale(%x: tensor<3x4xf32>, %s: tensor<3x1xf32>) -> tensor<3x4xf32> {
  %eps = gopt.constant dense<1.0e-5> : tensor<f32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 1>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %d = gopt.sub %x, %mean : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %sq = gopt.mul %d, %d : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 1>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %shifted = gopt.add %var, %eps : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %std = gopt.sqrt %shifted : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %n = gopt.div %d, %std : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %y = gopt.mul %n, %s : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

/// A negative axis counts from the back: with the default axis -1 a scale
/// varying along a leading dimension stays a mul, and one over the last
/// dimension is absorbed.
// CHECK-LABEL: func.func @negative_axis
// CHECK: %[[LN:.*]] = gopt.layer_norm %arg0, %{{.*}}, %{{.*}} :
// CHECK: %[[S:.*]] = gopt.mul %[[LN]], %arg1
// CHECK: gopt.mul %[[S]], %arg2
// CHECK-LABEL: func.func @negative_axis_last
// CHECK: %[[G:.*]] = gopt.reshape %arg1
// CHECK: gopt.layer_norm %arg0, %[[G]], %{{.*}} :
// CHECK-NOT: gopt.mul
func.func @negative_axis(%x: tensor<3x4xf32>, %s: tensor<3x1xf32>, %g: tensor<4xf32>) -> tensor<3x4xf32> {
  %one = gopt.constant dense<1.0> : tensor<4xf32>
  %zero = gopt.constant dense<0.0> : tensor<4xf32>
  %n = gopt.layer_norm %x, %one, %zero : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %a = gopt.mul %n, %s : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %y = gopt.mul %a, %g : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
func.func @negative_axis_last(%x: tensor<3x4xf32>, %g: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %one = gopt.constant dense<1.0> : tensor<4xf32>
  %zero = gopt.constant dense<0.0> : tensor<4xf32>
  %n = gopt.layer_norm %x, %one, %zero : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %y = gopt.mul %n, %g : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
