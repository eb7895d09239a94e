// RUN: gopt-opt %s -split-input-file --gopt-add-loss | FileCheck %s
// RUN: gopt-opt %s -split-input-file --gopt-add-loss='kind=mse keep-outputs=true' | FileCheck %s --check-prefix=MSE
// RUN: gopt-opt %s -split-input-file --gopt-add-loss='label-type=i32 output=probs' | FileCheck %s --check-prefix=I32
// RUN: not gopt-opt %s -split-input-file --gopt-add-loss=output=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not gopt-opt %s -split-input-file --gopt-add-loss=kind=hinge -o /dev/null 2>&1 | FileCheck %s --check-prefix=KIND

// NAME: error: gopt-add-loss: no output named 'nope' (outputs: logits, probs)
// KIND: error: gopt-add-loss: unknown kind 'hinge' (expected softmax-cross-entropy or mse)

// CHECK-LABEL: func @classifier
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32> {gopt.name = "x"}, %[[L:.*]]: tensor<?xi64> {gopt.name = "labels"})
// CHECK-SAME: -> (tensor<f32> {gopt.name = "loss"})
// CHECK: %[[LOGITS:.*]] = gopt.relu %[[X]]
// CHECK: %[[LOSS:.*]] = gopt.softmax_cross_entropy %[[LOGITS]], %[[L]] : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<f32>
// CHECK: return %[[LOSS]]
// MSE-LABEL: func @classifier
// MSE-SAME: %{{.*}}: tensor<?x4xf32> {gopt.name = "labels"}
// MSE-SAME: -> (tensor<f32> {gopt.name = "loss"}, tensor<?x4xf32> {gopt.name = "logits"}, tensor<?x4xf32> {gopt.name = "probs"})
// MSE: gopt.mse_loss
// I32-LABEL: func @classifier
// I32: %[[P:.*]] = gopt.softmax
// I32: gopt.softmax_cross_entropy %[[P]], %{{.*}} : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
func.func @classifier(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x4xf32> {gopt.name = "logits"}, tensor<?x4xf32> {gopt.name = "probs"}) {
  %0 = gopt.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = gopt.softmax %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

/// State updates (running statistics from --gopt-train-batch-norm) stay
/// results without keep-outputs; the other outputs go.
// CHECK-LABEL: func @with_state_update
// CHECK-SAME: -> (tensor<f32> {gopt.name = "loss"}, tensor<4xf32> {gopt.name = "bn.running_mean/new", gopt.updates = "bn.running_mean"})
// CHECK: %[[LOSS:.*]] = gopt.softmax_cross_entropy
// CHECK: return %[[LOSS]], %{{.*}} : tensor<f32>, tensor<4xf32>
func.func @with_state_update(%x: tensor<?x4xf32> {gopt.name = "x"}, %m: tensor<4xf32> {gopt.name = "bn.running_mean", gopt.state = "buffer"})
    -> (tensor<?x4xf32> {gopt.name = "logits"}, tensor<4xf32> {gopt.name = "bn.running_mean/new", gopt.updates = "bn.running_mean"}, tensor<?x4xf32> {gopt.name = "probs"}) {
  %0 = gopt.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = gopt.softmax %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = gopt.add %m, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %2, %1 : tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>
}
