// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fuse-batch-norm | FileCheck %s

/// TF 1.x unfused training BN (tf.nn.moments + tf.nn.batch_normalization) in
/// NHWC becomes one training batch_norm; the moments' stop_gradient is
/// looked through.
// CHECK-LABEL: func @tf_training_nhwc
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x8x16xf32>, %[[G:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
func.func @tf_training_nhwc(%x: tensor<?x8x8x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<?x8x8x16xf32> {
  // CHECK: %[[Y:.*]], %{{.*}}:4 = gopt.batch_norm %[[X]], %[[G]], %[[B]], %{{.*}}, %{{.*}} {training = true}
  // CHECK-NOT: gopt.reduce_mean
  // CHECK-NOT: gopt.rsqrt
  // CHECK: return %[[Y]]
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %sg = gopt.stop_gradient %mean : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %sq = gopt.squared_difference %x, %sg : (tensor<?x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<?x8x8x16xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %ve = gopt.add %var, %eps : (tensor<1x1x1x16xf32>, tensor<f32>) -> tensor<1x1x1x16xf32>
  %r = gopt.rsqrt %ve : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %inv = gopt.mul %r, %gamma : (tensor<1x1x1x16xf32>, tensor<16xf32>) -> tensor<1x1x1x16xf32>
  %xs = gopt.mul %x, %inv : (tensor<?x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<?x8x8x16xf32>
  %mi = gopt.mul %mean, %inv : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %sh = gopt.sub %beta, %mi : (tensor<16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %y = gopt.add %xs, %sh : (tensor<?x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<?x8x8x16xf32>
  return %y : tensor<?x8x8x16xf32>
}

// -----

/// The same in NCHW (axes N, H, W = 0, 2, 3), without gamma.
// CHECK-LABEL: func @tf_training_nchw_no_gamma
func.func @tf_training_nchw_no_gamma(%x: tensor<2x4x5x5xf32>, %beta: tensor<4x1x1xf32>) -> tensor<2x4x5x5xf32> {
  // CHECK: gopt.constant dense<1.000000e+00> : tensor<4xf32>
  // CHECK: gopt.reshape %{{.*}} {shape = array<i64: 4>}
  // CHECK: gopt.batch_norm {{.*}}data_format = "NCHW", epsilon = 9.99999974E-6 : f32{{.*}}training = true
  %eps = gopt.constant dense<1.0e-5> : tensor<1xf32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 0, 2, 3>, keep_dims = true} : (tensor<2x4x5x5xf32>) -> tensor<1x4x1x1xf32>
  %sq = gopt.squared_difference %mean, %x : (tensor<1x4x1x1xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 0, 2, 3>, keep_dims = true} : (tensor<2x4x5x5xf32>) -> tensor<1x4x1x1xf32>
  %ve = gopt.add %eps, %var : (tensor<1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %inv = gopt.rsqrt %ve : (tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %xs = gopt.mul %inv, %x : (tensor<1x4x1x1xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %mi = gopt.mul %inv, %mean : (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %sh = gopt.sub %beta, %mi : (tensor<4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %y = gopt.add %sh, %xs : (tensor<1x4x1x1xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  return %y : tensor<2x4x5x5xf32>
}

// -----

/// tf.nn.batch_normalization with moving statistics is an inference BN.
// CHECK-LABEL: func @tf_inference
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x8xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
func.func @tf_inference(%x: tensor<1x4x4x8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK: %[[Y:.*]] = gopt.batch_norm %[[X]], %[[G]], %[[B]], %[[M]], %[[V]] :
  // CHECK-NEXT: return %[[Y]]
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %ve = gopt.add %var, %eps : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %r = gopt.rsqrt %ve : (tensor<8xf32>) -> tensor<8xf32>
  %inv = gopt.mul %r, %gamma : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %xs = gopt.mul %x, %inv : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %mi = gopt.mul %mean, %inv : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %sh = gopt.sub %beta, %mi : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = gopt.add %xs, %sh : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

/// The exporters' form (x - mean) * (gamma * rsqrt(var + eps)) + beta in
/// NCHW with [C,1,1] parameters; they are reshaped to [C] at compile time.
// CHECK-LABEL: func @onnx_inference_nchw
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x4xf32>)
func.func @onnx_inference_nchw(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK-DAG: %[[G:.*]] = gopt.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[M:.*]] = gopt.constant dense<5.000000e-01> : tensor<3xf32>
  // CHECK: %[[Y:.*]] = gopt.batch_norm %[[X]], %[[G]], %{{.*}}, %[[M]], %{{.*}} {data_format = "NCHW", epsilon = 9.99999974E-6 : f32
  // CHECK-NEXT: return %[[Y]]
  %mean = gopt.constant dense<0.5> : tensor<3x1x1xf32>
  %var = gopt.constant dense<2.0> : tensor<3x1x1xf32>
  %gamma = gopt.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %beta = gopt.constant dense<0.1> : tensor<3x1x1xf32>
  %eps = gopt.constant dense<1.0e-5> : tensor<f32>
  %c = gopt.sub %x, %mean : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %ve = gopt.add %var, %eps : (tensor<3x1x1xf32>, tensor<f32>) -> tensor<3x1x1xf32>
  %r = gopt.rsqrt %ve : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %s = gopt.mul %gamma, %r : (tensor<3x1x1xf32>, tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %n = gopt.mul %c, %s : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %y = gopt.add %n, %beta : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

/// PyTorch's decomposed form (x - mean) / sqrt(var + eps) * gamma + beta.
// CHECK-LABEL: func @division_form
func.func @division_form(%x: tensor<2x6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6xf32> {
  // CHECK: gopt.batch_norm {{.*}}epsilon = 1.000000e-01 : f32
  // CHECK-NOT: gopt.div
  %eps = gopt.constant dense<0.1> : tensor<f32>
  %c = gopt.sub %x, %m : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %ve = gopt.add %v, %eps : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
  %sd = gopt.sqrt %ve : (tensor<6xf32>) -> tensor<6xf32>
  %n = gopt.div %c, %sd : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %s = gopt.mul %n, %g : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %y = gopt.add %s, %b : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

/// A frozen graph's BN after constant folding: x * s + b with per-channel
/// constants is a batch_norm with mean 0, variance 1 and epsilon 0.
// CHECK-LABEL: func @frozen_affine
func.func @frozen_affine(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK-DAG: %[[S:.*]] = gopt.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[B:.*]] = gopt.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[ZERO:.*]] = gopt.constant dense<0.000000e+00> : tensor<2xf32>
  // CHECK-DAG: %[[ONE:.*]] = gopt.constant dense<1.000000e+00> : tensor<2xf32>
  // CHECK: gopt.batch_norm %{{.*}}, %[[S]], %[[B]], %[[ZERO]], %[[ONE]] {epsilon = 0.000000e+00 : f32}
  %s = gopt.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %b = gopt.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = gopt.mul %x, %s : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y = gopt.add %m, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

/// Epsilon added after the rsqrt is another formula: left alone.
// CHECK-LABEL: func @other_epsilon_placement
func.func @other_epsilon_placement(%x: tensor<1x4x4x8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK-NOT: gopt.batch_norm
  // CHECK: gopt.rsqrt
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %r = gopt.rsqrt %var : (tensor<8xf32>) -> tensor<8xf32>
  %re = gopt.add %r, %eps : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %inv = gopt.mul %re, %gamma : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %xs = gopt.mul %x, %inv : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %mi = gopt.mul %mean, %inv : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %sh = gopt.sub %beta, %mi : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = gopt.add %xs, %sh : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

/// Moments over H and W only (instance-norm-like statistics) are not batch
/// norm: left alone.
// CHECK-LABEL: func @wrong_reduction_axes
func.func @wrong_reduction_axes(%x: tensor<1x8x8x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  // CHECK-NOT: gopt.batch_norm
  // CHECK: gopt.reduce_mean
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<1x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %sq = gopt.squared_difference %x, %mean : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<1x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %ve = gopt.add %var, %eps : (tensor<1x1x1x16xf32>, tensor<f32>) -> tensor<1x1x1x16xf32>
  %r = gopt.rsqrt %ve : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %inv = gopt.mul %r, %gamma : (tensor<1x1x1x16xf32>, tensor<16xf32>) -> tensor<1x1x1x16xf32>
  %xs = gopt.mul %x, %inv : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
  %mi = gopt.mul %mean, %inv : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %sh = gopt.sub %beta, %mi : (tensor<16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %y = gopt.add %xs, %sh : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
  return %y : tensor<1x8x8x16xf32>
}

// -----

/// The batch mean also feeds a moving-average update: an intermediate used
/// outside the pattern, so nothing is fused.
// CHECK-LABEL: func @shared_intermediate
func.func @shared_intermediate(%x: tensor<4x8x8x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> (tensor<4x8x8x16xf32>, tensor<1x1x1x16xf32>) {
  // CHECK-NOT: gopt.batch_norm
  // CHECK: gopt.squared_difference
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %mean = gopt.reduce_mean %x {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<4x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %sq = gopt.squared_difference %x, %mean : (tensor<4x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
  %var = gopt.reduce_mean %sq {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<4x8x8x16xf32>) -> tensor<1x1x1x16xf32>
  %ve = gopt.add %var, %eps : (tensor<1x1x1x16xf32>, tensor<f32>) -> tensor<1x1x1x16xf32>
  %r = gopt.rsqrt %ve : (tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %inv = gopt.mul %r, %gamma : (tensor<1x1x1x16xf32>, tensor<16xf32>) -> tensor<1x1x1x16xf32>
  %xs = gopt.mul %x, %inv : (tensor<4x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
  %mi = gopt.mul %mean, %inv : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %sh = gopt.sub %beta, %mi : (tensor<16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %y = gopt.add %xs, %sh : (tensor<4x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
  return %y, %mean : tensor<4x8x8x16xf32>, tensor<1x1x1x16xf32>
}
