// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-autodiff | FileCheck %s

/// gopt.if's gradient is an if on the same condition that takes the
/// forward's captures and the results' gradients. Each branch recomputes
/// its forward branch (a clone) and differentiates it; a capture a branch
/// does not use gets zeros there, and only captures that need a gradient
/// (here w, not x or the integer k) are results.
// CHECK-LABEL: func @if_branches
// CHECK: %[[Y:.*]] = gopt.if %[[C:[^ ]*]] captures(%[[X:[^ ,]*]], %[[W:[^ ,]*]], %[[K:[^ ,]*]] :
// CHECK: %[[DW:.*]] = gopt.if %[[C]] captures(%[[X]], %[[W]], %[[K]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<2xi64>, tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<2xi64>, %[[G:[^:]*]]: tensor<4xf32>):
// CHECK-NEXT: gopt.mul %[[A]], %[[B]]
// CHECK: %[[GB:.*]] = gopt.mul {{.*}}%[[G]]
// CHECK: gopt.yield %[[GB]] : tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK: %[[Z:.*]] = gopt.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: gopt.yield %[[Z]] : tensor<4xf32>
// CHECK: return %{{.*}}, %[[DW]]
func.func @if_branches(%c: tensor<i1>, %x: tensor<4xf32>, %k: tensor<2xi64>,
                       %w: tensor<4xf32> {gopt.name = "w", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %y = gopt.if %c captures(%x, %w, %k : tensor<4xf32>, tensor<4xf32>, tensor<2xi64>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<2xi64>):
    %m = gopt.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %m : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<2xi64>):
    %n = gopt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %n : tensor<4xf32>
  }
  %s = gopt.reduce_sum %y {axes = array<i64>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

/// An op without a gradient inside a branch is refused by name, as at the
/// top level.
func.func @if_no_rule(%c: tensor<i1>, %x: tensor<4xf32>,
                      %w: tensor<4xf32> {gopt.name = "w", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %y = gopt.if %c captures(%x, %w : tensor<4xf32>, tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    // expected-error @+1 {{'gopt.floor_div' op has no gradient in gopt-autodiff: the loss depends on it through a parameter}}
    %m = gopt.floor_div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %m : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    gopt.yield %b : tensor<4xf32>
  }
  %s = gopt.reduce_sum %y {axes = array<i64>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
