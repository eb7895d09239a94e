// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s

// Losses, gradient ops and optimizer updates round-trip, and their result
// types are what the shape functions infer.

// CHECK-LABEL: func @losses
func.func @losses(%logits: tensor<?x10xf32>, %labels: tensor<?xi64>, %y: tensor<4x3xf32>, %t: tensor<4x3xf32>)
    -> (tensor<f32>, tensor<?x10xf32>, tensor<f32>, tensor<4x3xf32>) {
  // CHECK: gopt.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  %l = gopt.softmax_cross_entropy %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  // CHECK: gopt.softmax_cross_entropy_grad
  %d = gopt.softmax_cross_entropy_grad %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x10xf32>
  // CHECK: gopt.mse_loss
  %m = gopt.mse_loss %y, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  // CHECK: gopt.mse_loss_grad
  %dm = gopt.mse_loss_grad %y, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %l, %d, %m, %dm : tensor<f32>, tensor<?x10xf32>, tensor<f32>, tensor<4x3xf32>
}

// CHECK-LABEL: func @conv_grads
func.func @conv_grads(%x: tensor<?x32x25x25xf32>, %dy: tensor<?x64x12x12xf32>, %w: tensor<64x32x3x3xf32>)
    -> (tensor<?x32x25x25xf32>, tensor<64x32x3x3xf32>) {
  // CHECK: gopt.conv2d_backprop_input {{.*}}input_shape = array<i64: -1, 32, 25, 25>{{.*}}strides = array<i64: 2, 2>
  %dx = gopt.conv2d_backprop_input %dy, %w {input_shape = array<i64: -1, 32, 25, 25>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, data_format = "NCHW", filter_format = "OIHW"}
      : (tensor<?x64x12x12xf32>, tensor<64x32x3x3xf32>) -> tensor<?x32x25x25xf32>
  // CHECK: gopt.conv2d_backprop_filter {{.*}}filter_shape = array<i64: 64, 32, 3, 3>
  %dw = gopt.conv2d_backprop_filter %x, %dy {filter_shape = array<i64: 64, 32, 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, data_format = "NCHW", filter_format = "OIHW"}
      : (tensor<?x32x25x25xf32>, tensor<?x64x12x12xf32>) -> tensor<64x32x3x3xf32>
  return %dx, %dw : tensor<?x32x25x25xf32>, tensor<64x32x3x3xf32>
}

// CHECK-LABEL: func @other_grads
func.func @other_grads(%x: tensor<8x4x4x16xf32>, %dp: tensor<8x2x2x16xf32>, %dy: tensor<8x4x4x16xf32>, %s: tensor<16xf32>)
    -> (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  // CHECK: gopt.max_pool_grad
  %dx = gopt.max_pool_grad %x, %dp {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x4x4x16xf32>, tensor<8x2x2x16xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: gopt.avg_pool_grad {{.*}}count_include_pad = true
  %da = gopt.avg_pool_grad %x, %dp {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = "SAME", count_include_pad = true} : (tensor<8x4x4x16xf32>, tensor<8x2x2x16xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: gopt.relu_grad
  %dr = gopt.relu_grad %dy, %x : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: gopt.batch_norm_grad {{.*}} -> (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %db:3 = gopt.batch_norm_grad %dy, %x, %s, %s, %s {epsilon = 1.0e-05 : f32}
      : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %dr, %db#0, %db#1, %db#2 : tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func @updates
func.func @updates(%p: tensor<64xf32>, %g: tensor<64xf32>, %v: tensor<64xf32>, %t: tensor<f32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  // CHECK: gopt.sgd_update {{.*}}{lr = 1.000000e-01 : f32, momentum = 0.899999976 : f32, nesterov = true}
  %p1, %v1 = gopt.sgd_update %p, %g, %v {lr = 0.1 : f32, momentum = 0.9 : f32, nesterov = true}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  // CHECK: gopt.adam_update {{.*}}{lr = 1.000000e-03 : f32}
  %p2, %m2, %v2 = gopt.adam_update %p1, %g, %v1, %v, %t {lr = 1.0e-03 : f32}
      : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %p2, %m2, %v2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func @loss_scaling
func.func @loss_scaling(%s: tensor<f32>, %n: tensor<f32>, %g: tensor<64xf32>, %h: tensor<3x3xbf16>, %p: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<f32>, tensor<f32>) {
  // CHECK: %[[OK:.*]] = gopt.all_finite %{{.*}}, %{{.*}} : (tensor<64xf32>, tensor<3x3xbf16>) -> tensor<i1>
  %ok = gopt.all_finite %g, %h : (tensor<64xf32>, tensor<3x3xbf16>) -> tensor<i1>
  // CHECK: gopt.select %[[OK]], {{.*}} : (tensor<i1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %q = gopt.select %ok, %g, %p : (tensor<i1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  // Defaults are not printed; a set growth interval is.
  // CHECK: gopt.loss_scale_update {{.*}} {growth_interval = 100 : i64} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %s1, %n1 = gopt.loss_scale_update %s, %n, %ok {growth_interval = 100 : i64}
      : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  return %q, %s1, %n1 : tensor<64xf32>, tensor<f32>, tensor<f32>
}
