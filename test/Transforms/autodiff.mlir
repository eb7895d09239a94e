// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-autodiff | FileCheck %s

/// A dense layer with a bias and relu under softmax cross-entropy: the
/// gradient of a broadcast bias is summed over the batch, matmul's weight
/// gradient is a transposed matmul, relu's uses relu's output.
// CHECK-LABEL: func @dense
// CHECK-SAME: -> (tensor<f32> {gopt.name = "loss"}, tensor<3x4xf32> {gopt.gradient_of = "w", gopt.name = "grad/w"}, tensor<4xf32> {gopt.gradient_of = "b", gopt.name = "grad/b"})
// CHECK: %[[Y:.*]] = gopt.matmul %[[X:.*]], %[[W:.*]] :
// CHECK: %[[Z:.*]] = gopt.add %[[Y]], %[[B:.*]] :
// CHECK: %[[R:.*]] = gopt.relu %[[Z]]
// CHECK: %[[LOSS:.*]] = gopt.softmax_cross_entropy %[[R]], %[[L:.*]] :
// CHECK: %[[DR:.*]] = gopt.softmax_cross_entropy_grad %[[R]], %[[L]]
// CHECK: %[[DZ:.*]] = gopt.relu_grad %[[DR]], %[[R]]
// CHECK: %[[SUM:.*]] = gopt.reduce_sum %[[DZ]] {axes = array<i64: 0>, keep_dims = true} : (tensor<?x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[DB:.*]] = gopt.reshape %[[SUM]] {shape = array<i64: 4>}
// CHECK: %[[DW:.*]] = gopt.matmul %[[X]], %[[DZ]] {transpose_a = true} : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]]
func.func @dense(%x: tensor<?x3xf32>, %labels: tensor<?xi64>,
                 %w: tensor<3x4xf32> {gopt.name = "w", gopt.state = "param"},
                 %b: tensor<4xf32> {gopt.name = "b", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.matmul %x, %w : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %1 = gopt.add %0, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %2 = gopt.relu %1 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %3 = gopt.softmax_cross_entropy %2, %labels : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<f32>
  return %3 : tensor<f32>
}

// -----

/// conv2d with SAME padding and a fused relu: the gradient ops get the
/// resolved explicit pads; the first layer's input gets no gradient; a value
/// used twice sums its gradients; the bias gradient sums over N, H, W.
// CHECK-LABEL: func @conv
// CHECK: %[[C:.*]] = gopt.conv2d %[[X:.*]], %[[W:[^ ]*]], %[[B:[^ ]*]] {activation = "relu", padding = "SAME", strides = array<i64: 2, 2>}
// CHECK: %[[SQ:.*]] = gopt.mul %[[C]], %[[C]]
// CHECK: %[[LOSS:.*]] = gopt.reduce_mean %[[SQ]]
// CHECK: %[[D0:.*]] = gopt.mul {{.*}} : (tensor<1x1x1x1xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK: %[[G1:.*]] = gopt.mul %[[D0]], %[[C]]
// CHECK: %[[G2:.*]] = gopt.mul %[[D0]], %[[C]]
// CHECK: %[[DC:.*]] = gopt.add %[[G1]], %[[G2]]
// CHECK: %[[DZ:.*]] = gopt.relu_grad %[[DC]], %[[C]]
// CHECK-NOT: conv2d_backprop_input
// CHECK: %[[DW:.*]] = gopt.conv2d_backprop_filter %[[X]], %[[DZ]] {dilations = array<i64: 1, 1>, filter_shape = array<i64: 3, 3, 2, 3>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>}
// CHECK: %[[DB:.*]] = gopt.reduce_sum %[[DZ]] {axes = array<i64: 0, 1, 2>}
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]]
func.func @conv(%x: tensor<2x8x8x2xf32>, %w: tensor<3x3x2x3xf32> {gopt.name = "w", gopt.state = "param"},
                %b: tensor<3xf32> {gopt.name = "b", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.conv2d %x, %w, %b {padding = "SAME", strides = array<i64: 2, 2>, activation = "relu"} : (tensor<2x8x8x2xf32>, tensor<3x3x2x3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %1 = gopt.mul %0, %0 : (tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  %2 = gopt.reduce_mean %1 {axes = array<i64>} : (tensor<2x4x4x3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

/// A deeper conv gets an input gradient with the input's shape, batch -1.
// CHECK-LABEL: func @two_convs
// CHECK: gopt.conv2d_backprop_input %{{.*}}, %{{.*}} {data_format = "NCHW", dilations = array<i64: 1, 1>, filter_format = "OIHW", input_shape = array<i64: -1, 2, 6, 6>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-SAME: (tensor<?x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<?x2x6x6xf32>
func.func @two_convs(%x: tensor<?x1x8x8xf32>, %w1: tensor<2x1x3x3xf32> {gopt.name = "w1", gopt.state = "param"},
                     %w2: tensor<2x2x3x3xf32> {gopt.name = "w2", gopt.state = "param"}, %t: tensor<?x2x4x4xf32>) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.conv2d %x, %w1 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x1x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x6x6xf32>
  %1 = gopt.conv2d %0, %w2 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<?x2x4x4xf32>
  %2 = gopt.mse_loss %1, %t : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

/// avg_pool's gradient keeps the forward's attributes as they are (SAME,
/// ceil_mode, count_include_pad decide its divisor).
// CHECK-LABEL: func @avg_pool
// CHECK: %[[P:.*]] = gopt.avg_pool %[[C:.*]] {ceil_mode = true, count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 2, 2>}
// CHECK: gopt.avg_pool_grad %[[C]], %{{.*}} {ceil_mode = true, count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<?x2x7x7xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x7x7xf32>
func.func @avg_pool(%x: tensor<?x1x7x7xf32>, %w: tensor<2x1x1x1xf32> {gopt.name = "w", gopt.state = "param"}, %t: tensor<?x2x4x4xf32>) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x1x7x7xf32>, tensor<2x1x1x1xf32>) -> tensor<?x2x7x7xf32>
  %1 = gopt.avg_pool %0 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = "SAME", ceil_mode = true, count_include_pad = true, data_format = "NCHW"} : (tensor<?x2x7x7xf32>) -> tensor<?x2x4x4xf32>
  %2 = gopt.mse_loss %1, %t : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

/// A parameter the loss does not depend on gets a zero gradient.
// CHECK-LABEL: func @unused
// CHECK: %[[Z:.*]] = gopt.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]]
func.func @unused(%x: tensor<2xf32>, %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"},
                  %q: tensor<2xf32> {gopt.name = "q", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.mul %x, %p : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @no_gradient(%x: tensor<2x4xf32>, %p: tensor<4xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.add %x, %p : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // expected-error @+1 {{'gopt.floor_div' op has no gradient in gopt-autodiff: the loss depends on it through a parameter}}
  %1 = gopt.floor_div %0, %0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = gopt.reduce_sum %1 {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// expected-error @+1 {{gopt-autodiff: no result named 'loss' (results: out); add one with --gopt-add-loss}}
func.func @no_loss(%x: tensor<2xf32>) -> (tensor<2xf32> {gopt.name = "out"}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{gopt-autodiff: the function has no parameters (arguments with gopt.state = "param"); run --gopt-lift-params first}}
func.func @no_params(%x: tensor<2xf32>) -> (tensor<f32> {gopt.name = "loss"}) {
  %0 = gopt.reduce_sum %x {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{gopt-autodiff: loss 'loss' must be an f32 scalar, got 'tensor<2xf32>'}}
func.func @vector_loss(%x: tensor<2xf32>, %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<2xf32> {gopt.name = "loss"}) {
  %0 = gopt.mul %x, %p : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @inference_bn(%x: tensor<2x3xf32>, %s: tensor<3xf32> {gopt.name = "s", gopt.state = "param"}, %m: tensor<3xf32>) -> (tensor<f32> {gopt.name = "loss"}) {
  // expected-error @+1 {{'gopt.batch_norm' op has no gradient in gopt-autodiff: inference-form batch_norm}}
  %0 = gopt.batch_norm %x, %s, %m, %m, %m : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = gopt.reduce_sum %0 {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
