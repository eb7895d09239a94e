// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-lift-params=batch-norm-stats=true --gopt-train-batch-norm | FileCheck %s
// RUN: gopt-opt %s -split-input-file --gopt-lift-params=batch-norm-stats=true | FileCheck %s --check-prefix=LIFT

/// The statistics become buffers; the batch norm normalizes with the batch
/// and returns its updated running statistics as state updates.
// LIFT-LABEL: func @bn
// LIFT-SAME: gopt.name = "bn.running_mean", gopt.state = "buffer"
// LIFT-SAME: gopt.name = "bn.running_var", gopt.state = "buffer"
// LIFT: gopt.batch_norm {{.*}} -> tensor<?x2x3x3xf32>
// CHECK-LABEL: func @bn
// CHECK-SAME: %[[MEAN:[^:]*]]: tensor<2xf32> {gopt.initial_value = dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>, gopt.name = "bn.running_mean", gopt.state = "buffer"}
// CHECK-SAME: %[[VAR:[^:]*]]: tensor<2xf32> {gopt.initial_value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, gopt.name = "bn.running_var", gopt.state = "buffer"}
// CHECK-SAME: -> (tensor<?x2x3x3xf32>, tensor<2xf32> {gopt.name = "bn.running_mean/new", gopt.updates = "bn.running_mean"}, tensor<2xf32> {gopt.name = "bn.running_var/new", gopt.updates = "bn.running_var"})
// CHECK: %[[Y:.*]], %[[S:.*]]:4 = gopt.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[VAR]] {data_format = "NCHW", epsilon = 9.99999974E-6 : f32, training = true}
// CHECK: return %[[Y]], %[[S]]#2, %[[S]]#3
func.func @bn(%x: tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32> {
  %scale = gopt.constant dense<1.0> : tensor<2xf32> loc("bn.weight")
  %offset = gopt.constant dense<0.0> : tensor<2xf32> loc("bn.bias")
  %mean = gopt.constant dense<[0.1, 0.2]> : tensor<2xf32> loc("bn.running_mean")
  %var = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("bn.running_var")
  %0 = gopt.batch_norm %x, %scale, %offset, %mean, %var {data_format = "NCHW", epsilon = 1.0e-5 : f32} : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  return %0 : tensor<?x2x3x3xf32>
}

// -----

func.func @constant_statistics(%x: tensor<4x2xf32>, %m: tensor<2xf32>) -> tensor<4x2xf32> {
  %s = gopt.constant dense<1.0> : tensor<2xf32>
  // expected-error @+1 {{'gopt.batch_norm' op gopt-train-batch-norm: the mean and variance must be state arguments to be updated (run gopt-lift-params{batch-norm-stats=true} first)}}
  %0 = gopt.batch_norm %x, %s, %s, %m, %m : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
