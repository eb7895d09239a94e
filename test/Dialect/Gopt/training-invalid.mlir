// RUN: gopt-opt %s -split-input-file -verify-diagnostics

func.func @logits_rank(%l: tensor<2x3x4xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  // expected-error @+1 {{'gopt.softmax_cross_entropy' op expects logits of rank 2 ([batch, classes]), got rank 3}}
  %0 = gopt.softmax_cross_entropy %l, %y : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @label_count(%l: tensor<4x10xf32>, %y: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+1 {{expects one label per row of logits (4 rows), got 3 labels}}
  %0 = gopt.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @float_labels(%l: tensor<4x10xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = gopt.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mse_shapes(%p: tensor<4x3xf32>, %t: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'gopt.mse_loss' op expects target of the prediction's shape [4, 3], got [4, 2]}}
  %0 = gopt.mse_loss %p, %t : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @relu_grad_shape(%dy: tensor<4x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'gopt.relu_grad' op expects dy of y's shape [4, 2], got [4, 3]}}
  %0 = gopt.relu_grad %dy, %y : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// dy must be what the forward conv of input_shape produces.
func.func @backprop_input_mismatch(%dy: tensor<?x64x10x10xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<?x32x26x26xf32> {
  // expected-error @+1 {{'gopt.conv2d_backprop_input' op expects dy (the conv's output) of shape [?, 64, 24, 24], got [?, 64, 10, 10]}}
  %0 = gopt.conv2d_backprop_input %dy, %w {input_shape = array<i64: -1, 32, 26, 26>, data_format = "NCHW", filter_format = "OIHW"}
      : (tensor<?x64x10x10xf32>, tensor<64x32x3x3xf32>) -> tensor<?x32x26x26xf32>
  return %0 : tensor<?x32x26x26xf32>
}

// -----

func.func @backprop_input_shape_attr(%dy: tensor<?x64x24x24xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<?x32x26x26xf32> {
  // expected-error @+1 {{'gopt.conv2d_backprop_input' op expects input_shape entries > 0 (the batch may be -1), got [-1, 32, -1, 26]}}
  %0 = gopt.conv2d_backprop_input %dy, %w {input_shape = array<i64: -1, 32, -1, 26>, data_format = "NCHW", filter_format = "OIHW"}
      : (tensor<?x64x24x24xf32>, tensor<64x32x3x3xf32>) -> tensor<?x32x26x26xf32>
  return %0 : tensor<?x32x26x26xf32>
}

// -----

func.func @backprop_filter_channels(%x: tensor<?x16x26x26xf32>, %dy: tensor<?x64x24x24xf32>) -> tensor<64x32x3x3xf32> {
  // expected-error @+1 {{'gopt.conv2d_backprop_filter' op}}
  %0 = gopt.conv2d_backprop_filter %x, %dy {filter_shape = array<i64: 64, 32, 3, 3>, data_format = "NCHW", filter_format = "OIHW"}
      : (tensor<?x16x26x26xf32>, tensor<?x64x24x24xf32>) -> tensor<64x32x3x3xf32>
  return %0 : tensor<64x32x3x3xf32>
}

// -----

func.func @max_pool_grad_shape(%x: tensor<8x4x4x16xf32>, %dy: tensor<8x3x3x16xf32>) -> tensor<8x4x4x16xf32> {
  // expected-error @+1 {{'gopt.max_pool_grad' op expects dy (the pool's output) of shape [8, 2, 2, 16], got [8, 3, 3, 16]}}
  %0 = gopt.max_pool_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x4x4x16xf32>, tensor<8x3x3x16xf32>) -> tensor<8x4x4x16xf32>
  return %0 : tensor<8x4x4x16xf32>
}

// -----

func.func @avg_pool_grad_ceil_shape(%x: tensor<8x5x5x16xf32>, %dy: tensor<8x2x2x16xf32>) -> tensor<8x5x5x16xf32> {
  // expected-error @+1 {{'gopt.avg_pool_grad' op expects dy (the pool's output) of shape [8, 3, 3, 16], got [8, 2, 2, 16]}}
  %0 = gopt.avg_pool_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<8x5x5x16xf32>, tensor<8x2x2x16xf32>) -> tensor<8x5x5x16xf32>
  return %0 : tensor<8x5x5x16xf32>
}

// -----

func.func @bn_grad_channels(%dy: tensor<8x4x4x16xf32>, %x: tensor<8x4x4x16xf32>, %s: tensor<8xf32>) -> tensor<8x4x4x16xf32> {
  // expected-error @+1 {{'gopt.batch_norm_grad' op}}
  %0:3 = gopt.batch_norm_grad %dy, %x, %s, %s, %s : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8x4x4x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0 : tensor<8x4x4x16xf32>
}

// -----

func.func @sgd_velocity(%p: tensor<64xf32>, %g: tensor<64xf32>, %v: tensor<32xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'gopt.sgd_update' op expects velocity of the parameter's shape [64], got [32]}}
  %p1, %v1 = gopt.sgd_update %p, %g, %v {lr = 0.1 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<32xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @sgd_negative_lr(%p: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'gopt.sgd_update' op expects lr >= 0, got -0.1}}
  %p1, %v1 = gopt.sgd_update %p, %p, %p {lr = -0.1 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
  return %p1 : tensor<64xf32>
}

// -----

func.func @adam_beta(%p: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gopt.adam_update' op expects beta2 in [0, 1), got 1}}
  %0:3 = gopt.adam_update %p, %p, %p, %p, %t {lr = 1.0e-03 : f32, beta2 = 1.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @adam_step_rank(%p: tensor<4xf32>, %t: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #4 must be 0D tensor of 32-bit float values}}
  %0:3 = gopt.adam_update %p, %p, %p, %p, %t {lr = 1.0e-03 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @dropout_grad_seed(%dy: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gopt.dropout_grad' op expects the non-zero seed of its dropout (the mask is recomputed from it)}}
  %0 = gopt.dropout_grad %dy {ratio = 0.5 : f32, seed = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @all_finite_empty() -> tensor<i1> {
  // expected-error @+1 {{'gopt.all_finite' op expects at least one operand}}
  %0 = gopt.all_finite : () -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

func.func @select_types(%p: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'gopt.select' op expects on_true and on_false of one type, got 'tensor<4xf32>' and 'tensor<4xbf16>'}}
  %0 = gopt.select %p, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_pred(%p: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 1-bit signless integer values}}
  %0 = gopt.select %p, %a, %a : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @loss_scale_growth(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{'gopt.loss_scale_update' op expects growth_factor > 1, got 1}}
  %0:2 = gopt.loss_scale_update %s, %n, %ok {growth_factor = 1.0 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @loss_scale_backoff(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{'gopt.loss_scale_update' op expects backoff_factor in (0, 1), got 1.5}}
  %0:2 = gopt.loss_scale_update %s, %n, %ok {backoff_factor = 1.5 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @loss_scale_interval(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{'gopt.loss_scale_update' op expects growth_interval >= 1, got 0}}
  %0:2 = gopt.loss_scale_update %s, %n, %ok {growth_interval = 0 : i64} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  return %0#0 : tensor<f32>
}
