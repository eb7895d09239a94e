// RUN: gopt-opt %s -split-input-file -verify-each -gopt-strip-debug-ops | FileCheck %s
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-strip-debug-ops=training=true | FileCheck %s --check-prefix=TRAIN

/// identity, check_numerics, stop_gradient and inference dropout go; the
/// value flows straight to its user.
// CHECK-LABEL: func @strip_chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// TRAIN-LABEL: func @strip_chain
func.func @strip_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[R:.*]] = gopt.relu %[[X]]
  // CHECK-NEXT: return %[[R]]
  // TRAIN: gopt.stop_gradient
  // TRAIN-NOT: gopt.check_numerics
  %0 = gopt.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = gopt.check_numerics %0 {message = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = gopt.stop_gradient %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = gopt.dropout %2 {ratio = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = gopt.relu %3 : (tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

/// Training-mode dropout is random and stays.
// CHECK-LABEL: func @training_dropout_stays
func.func @training_dropout_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: gopt.dropout
  %0 = gopt.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Dead pure ops go, including chains of them; a check_numerics on a dead
/// value goes too.
// CHECK-LABEL: func @dead_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @dead_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: gopt.exp
  // CHECK-NOT: gopt.tanh
  // CHECK-NOT: gopt.check_numerics
  // CHECK: return %[[X]]
  %0 = gopt.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = gopt.tanh %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = gopt.check_numerics %1 {message = "dead"} : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
