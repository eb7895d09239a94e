// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-autodiff | FileCheck %s

/// "Has a gradient" is DifferentiableOpInterface: an op without it between
/// the parameters and the loss is refused with one error naming the op,
/// whichever family it comes from (a binary op, a normalization, a
/// gradient op itself: no second derivatives).

func.func @mod(%x: tensor<2x4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  // expected-error @+1 {{'gopt.mod' op has no gradient in gopt-autodiff: the loss depends on it through a parameter, and it has no gradient rule (DifferentiableOpInterface; docs/op-semantics.md lists the differentiable ops)}}
  %0 = gopt.mod %x, %p : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @lrn(%x: tensor<1x4x2x2xf32>, %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.add %x, %p : (tensor<1x4x2x2xf32>, tensor<2xf32>) -> tensor<1x4x2x2xf32>
  // expected-error @+1 {{'gopt.lrn' op has no gradient in gopt-autodiff: the loss depends on it through a parameter, and it has no gradient rule}}
  %1 = gopt.lrn %0 {size = 3 : i64, data_format = "NCHW"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %2 = gopt.reduce_sum %1 {axes = array<i64>} : (tensor<1x4x2x2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

func.func @second_derivative(%x: tensor<4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.relu %p : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'gopt.relu_grad' op has no gradient in gopt-autodiff: the loss depends on it through a parameter, and it has no gradient rule}}
  %1 = gopt.relu_grad %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = gopt.reduce_sum %1 {axes = array<i64>} : (tensor<4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

/// An op without a gradient that the loss reaches only through values that
/// do not depend on a parameter is fine: it is not differentiated.
// CHECK-LABEL: func @off_the_path
// CHECK: gopt.pow
// CHECK: return {{.*}} : tensor<f32>, tensor<4xf32>
func.func @off_the_path(%x: tensor<4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.pow %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = gopt.mul %0, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = gopt.reduce_sum %1 {axes = array<i64>} : (tensor<4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
