// RUN: gopt-opt %s --gopt-add-optimizer='kind=sgd lr=0.5 momentum=0.9' | FileCheck %s --check-prefix=SGD
// RUN: gopt-opt %s --gopt-add-optimizer=kind=adam | FileCheck %s --check-prefix=ADAM
// RUN: not gopt-opt %s --gopt-add-optimizer=kind=rmsprop -o /dev/null 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not gopt-opt %s --gopt-add-optimizer='kind=adam beta1=1.5' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BETA

// KIND: error: gopt-add-optimizer: unknown kind 'rmsprop' (expected sgd or adam)
// BETA: error: gopt-add-optimizer: expects lr > 0, momentum >= 0, weight-decay >= 0, beta1 and beta2 in [0, 1) and epsilon > 0

/// Each gradient result becomes the updated parameter; optimizer state
/// arguments start at zero (no initial value) and are returned updated.
// SGD-LABEL: func @step
// SGD-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {gopt.initial_value = {{.*}}, gopt.name = "w", gopt.state = "param"}
// SGD-SAME: %[[V:[^:]*]]: tensor<4x3xf32> {gopt.name = "w/velocity", gopt.state = "optimizer"}
// SGD-SAME: -> (tensor<f32> {gopt.name = "loss"}, tensor<4x3xf32> {gopt.name = "w/new", gopt.updates = "w"}, tensor<4x3xf32> {gopt.name = "w/velocity/new", gopt.updates = "w/velocity"})
// SGD: %[[P:.*]], %[[NV:.*]] = gopt.sgd_update %[[W]], %{{.*}}, %[[V]] {lr = 5.000000e-01 : f32, momentum = 0.899999976 : f32}
// SGD: return %{{.*}}, %[[P]], %[[NV]]
// ADAM-LABEL: func @step
// ADAM-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {{.*}}gopt.state = "param"}
// ADAM-SAME: %[[STEP:[^:]*]]: tensor<f32> {gopt.name = "optimizer/step", gopt.state = "optimizer"}
// ADAM-SAME: %[[M:[^:]*]]: tensor<4x3xf32> {gopt.name = "w/m", gopt.state = "optimizer"}
// ADAM-SAME: %[[V:[^:]*]]: tensor<4x3xf32> {gopt.name = "w/v", gopt.state = "optimizer"}
// ADAM-SAME: gopt.updates = "optimizer/step"
// ADAM: %[[ONE:.*]] = gopt.constant dense<1.000000e+00> : tensor<f32>
// ADAM: %[[T:.*]] = gopt.add %[[STEP]], %[[ONE]]
// ADAM: gopt.adam_update %[[W]], %{{.*}}, %[[M]], %[[V]], %[[T]] {lr = 1.000000e-03 : f32}
func.func @step(%x: tensor<2x4xf32>, %w: tensor<4x3xf32> {gopt.name = "w", gopt.state = "param", gopt.initial_value = dense<1.0> : tensor<4x3xf32>})
    -> (tensor<f32> {gopt.name = "loss"}, tensor<4x3xf32> {gopt.name = "grad/w", gopt.gradient_of = "w"}) {
  %y = gopt.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %l = gopt.reduce_sum %y {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
  %g = gopt.matmul %x, %x {transpose_a = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %gw = gopt.slice %g {starts = array<i64: 0, 0>, ends = array<i64: 4, 3>, steps = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x3xf32>
  return %l, %gw : tensor<f32>, tensor<4x3xf32>
}

