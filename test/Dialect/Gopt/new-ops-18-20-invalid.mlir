// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// The ops of ONNX opsets 18-20 refuse what their shape functions do not
/// define.

func.func @bitwise_float(%a: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.bitwise_and' op operand #0 must be ranked tensor of 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<3xf32>'}}
  %0 = gopt.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @bitwise_mixed(%a: tensor<3xi32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'gopt.bitwise_or' op requires the same element type for all operands and results}}
  %0 = gopt.bitwise_or %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  return
}

// -----

func.func @col2im_blocks(%x: tensor<1x12x15xf32>) {
  // expected-error@+1 {{'gopt.col2im' op expects x's dim 2 to be the number of blocks, 16 ([4, 4]), got 15}}
  %y = gopt.col2im %x {image_shape = array<i64: 5, 5>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x12x15xf32>) -> tensor<1x3x5x5xf32>
  return
}

// -----

func.func @col2im_channels(%x: tensor<1x10x16xf32>) {
  // expected-error@+1 {{'gopt.col2im' op expects x's dim 1 (10) to be a multiple of the block size 4}}
  %y = gopt.col2im %x {image_shape = array<i64: 5, 5>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x10x16xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @deform_offset(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %o: tensor<1x18x6x6xf32>, %b: tensor<6xf32>) {
  // expected-error@+1 {{'gopt.deform_conv2d' op expects offset of shape [1, 18, 8, 8], got [1, 18, 6, 6]}}
  %0 = gopt.deform_conv2d %x, %w, %o, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x6x6xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @deform_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %o: tensor<1x18x8x8xf32>, %b: tensor<6xf32>) {
  // expected-error@+1 {{'gopt.deform_conv2d' op expects x's 4 channels to be the filter's 4 times group 2}}
  %0 = gopt.deform_conv2d %x, %w, %o, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @deform_grad_dy(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %o: tensor<1x18x8x8xf32>, %dy: tensor<1x6x6x6xf32>) {
  // expected-error@+1 {{'gopt.deform_conv2d_grad' op expects dy of the forward's result shape [1, 6, 8, 8], got [1, 6, 6, 6]}}
  %0:4 = gopt.deform_conv2d_grad %x, %w, %o, %dy {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<1x6x6x6xf32>) -> (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<1x18x8x8xf32>, tensor<1x9x8x8xf32>)
  return
}
