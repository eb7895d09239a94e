// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-autodiff | FileCheck %s

/// "Has a gradient" is DifferentiableOpInterface: an op without it between
/// the parameters and the loss is refused with one error naming the op and
/// the reason ODS gives (notDifferentiable or missingGradient),
/// whichever family it comes from (a binary op, a gradient op itself: no
/// second derivatives), and a loop that may end early says why.

func.func @floor_div(%x: tensor<2x4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  // expected-error @+1 {{'gopt.floor_div' op has no gradient in gopt-autodiff: the loss depends on it through a parameter, and it has no gradient rule (DifferentiableOpInterface; docs/op-semantics.md lists the differentiable ops); it is not differentiable: piecewise constant: its derivative is zero almost everywhere}}
  %0 = gopt.floor_div %x, %p : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @loop(%x: tensor<2xf32>, %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %n = gopt.constant dense<3> : tensor<i64>
  %c = gopt.constant dense<true> : tensor<i1>
  // expected-error @+1 {{'gopt.loop' op has no gradient in gopt-autodiff: it may end before max_trip_count (no cond_invariant), and backpropagation through its iterations stacks their carried values, which needs the number of iterations before it runs}}
  %r = gopt.loop %n, %c carried(%x : tensor<2xf32>) captures(%p : tensor<2xf32>) : tensor<i64>, tensor<i1> -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %acc: tensor<2xf32>, %q: tensor<2xf32>):
    %next = gopt.mul %acc, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    gopt.yield %cc, %next : tensor<i1>, tensor<2xf32>
  }
  %s = gopt.reduce_sum %r {axes = array<i64>} : (tensor<2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

/// dynamic_resize differentiates its input only: scales (or a roi)
/// computed from a parameter are refused by name.
func.func @dynamic_resize_scales(%x: tensor<1x2x4x4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %roi = gopt.constant dense<> : tensor<0xf32>
  %sizes = gopt.constant dense<> : tensor<0xi64>
  // expected-error @+1 {{'gopt.dynamic_resize' op has no gradient in gopt-autodiff: the loss depends on its roi or scales through a parameter (only the gradient with respect to the input is implemented)}}
  %1 = gopt.dynamic_resize %x, %roi, %p, %sizes {data_format = "NCHW", mode = "linear"} : (tensor<1x2x4x4xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x2x8x8xf32>
  %2 = gopt.reduce_sum %1 {axes = array<i64>} : (tensor<1x2x8x8xf32>) -> tensor<f32>
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

// -----

/// conv3d_transpose's gradient is conv3d of dy, which maps back to x's size
/// only while output_padding is below the stride.
func.func @conv3d_transpose_output_padding(%x: tensor<1x2x2x2x2xf32>, %w: tensor<2x1x2x2x2xf32> {gopt.name = "w", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  // expected-error @+1 {{'gopt.conv3d_transpose' op has no gradient in gopt-autodiff: output_padding 1 is not below its stride 1 (the conv3d adjoint would give x another element)}}
  %0 = gopt.conv3d_transpose %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, output_padding = array<i64: 1, 0, 0>} : (tensor<1x2x2x2x2xf32>, tensor<2x1x2x2x2xf32>) -> tensor<1x1x5x4x4xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64>} : (tensor<1x1x5x4x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

/// roi_align differentiates x only: regions computed from a parameter are
/// refused by name.
func.func @roi_align_rois(%x: tensor<1x2x6x6xf32>, %b: tensor<2xi64>, %p: tensor<2x4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  // expected-error @+1 {{'gopt.roi_align' op has no gradient in gopt-autodiff: the loss depends on its rois through a parameter (only the gradient with respect to x is implemented)}}
  %0 = gopt.roi_align %x, %p, %b {output_height = 2 : i64, output_width = 2 : i64} : (tensor<1x2x6x6xf32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x2x2x2xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64>} : (tensor<2x2x2x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
