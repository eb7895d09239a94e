// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the 3-D window ops.

func.func @conv3d_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op expects input of rank 5 ([N, C, D, H, W]), got [1, 3, 8, 8]}}
  %y = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x6x6x6xf32>
  return
}

// -----

func.func @conv3d_channels(%x: tensor<1x4x8x8x8xf32>, %w: tensor<6x3x3x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op expects the input channels (4) to equal the filter's input channels per group (3) times groups (2); input [1, 4, 8, 8, 8], filter [6, 3, 3, 3, 3]}}
  %y = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, groups = 2 : i64} : (tensor<1x4x8x8x8xf32>, tensor<6x3x3x3x3xf32>) -> tensor<1x6x6x6x6xf32>
  return
}

// -----

func.func @conv3d_groups_out(%x: tensor<1x4x8x8x8xf32>, %w: tensor<5x2x3x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op expects the filter's output channels (5) divisible by groups (2)}}
  %y = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, groups = 2 : i64} : (tensor<1x4x8x8x8xf32>, tensor<5x2x3x3x3xf32>) -> tensor<1x5x6x6x6xf32>
  return
}

// -----

func.func @conv3d_pads(%x: tensor<1x3x8x8x8xf32>, %w: tensor<4x3x3x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op expects pads of 6 entries, got [1, 1, 1, 1]}}
  %y = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x8x8x8xf32>
  return
}

// -----

func.func @conv3d_bias(%x: tensor<1x3x8x8x8xf32>, %w: tensor<4x3x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op expects bias}}
  %y = gopt.conv3d %x, %w, %b {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x8x8x8xf32>, tensor<4x3x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6x6xf32>
  return
}

// -----

func.func @conv3d_window(%x: tensor<1x3x2x8x8xf32>, %w: tensor<4x3x3x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv3d' op has a window of 3 (kernel 3, dilation 1) larger than the padded input size 2 in spatial dimension D}}
  %y = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x2x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x1x6x6xf32>
  return
}

// -----

func.func @conv3d_transpose_channels(%x: tensor<1x4x3x3x3xf32>, %w: tensor<3x2x2x2x2xf32>) {
  // expected-error@+1 {{'gopt.conv3d_transpose' op expects the input channels (4) to equal the filter's input channels (3)}}
  %y = gopt.conv3d_transpose %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, output_padding = array<i64: 0, 0, 0>} : (tensor<1x4x3x3x3xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x2x6x6x6xf32>
  return
}

// -----

func.func @conv3d_transpose_output_padding(%x: tensor<1x4x3x3x3xf32>, %w: tensor<4x2x2x2x2xf32>) {
  // expected-error@+1 {{'gopt.conv3d_transpose' op expects output_padding of 3 entries, got [0, 0]}}
  %y = gopt.conv3d_transpose %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x4x3x3x3xf32>, tensor<4x2x2x2x2xf32>) -> tensor<1x2x6x6x6xf32>
  return
}

// -----

func.func @conv3d_transpose_empty(%x: tensor<1x4x1x3x3xf32>, %w: tensor<4x2x1x2x2xf32>) {
  // expected-error@+1 {{'gopt.conv3d_transpose' op expects pads that leave a non-empty output, got output shape [1, 2, 0, 6, 6] for input [1, 4, 1, 3, 3] and pads [1, 0, 0, 0, 0, 0]}}
  %y = gopt.conv3d_transpose %x, %w {strides = array<i64: 1, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 0, 0, 0, 0, 0>, output_padding = array<i64: 0, 0, 0>} : (tensor<1x4x1x3x3xf32>, tensor<4x2x1x2x2xf32>) -> tensor<1x2x1x6x6xf32>
  return
}

// -----

func.func @max_pool3d_kernel(%x: tensor<1x3x8x8x8xf32>) {
  // expected-error@+1 {{'gopt.max_pool3d' op expects kernel of 3 entries, got [2, 2]}}
  %y = gopt.max_pool3d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x8x8x8xf32>) -> tensor<1x3x7x7x7xf32>
  return
}

// -----

func.func @max_pool3d_dilation(%x: tensor<1x3x8x8x8xf32>) {
  // expected-error@+1 {{'gopt.max_pool3d' op expects window kernel (2), stride (1) and dilation (0) >= 1 in spatial dimension W}}
  %y = gopt.max_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x8x8x8xf32>) -> tensor<1x3x7x7x7xf32>
  return
}

// -----

func.func @avg_pool3d_pads(%x: tensor<1x3x8x8x8xf32>) {
  // expected-error@+1 {{'gopt.avg_pool3d' op expects non-negative pads, got -1 and 0 in spatial dimension H}}
  %y = gopt.avg_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, -1, 0, 0, 0>} : (tensor<1x3x8x8x8xf32>) -> tensor<1x3x7x6x7xf32>
  return
}

// -----

/// A gradient's dy has the forward's result shape.
func.func @conv3d_grad_dy(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>, %dy: tensor<1x3x4x4x4xf32>) {
  // expected-error@+1 {{'gopt.conv3d_grad' op expects dy of the forward's result shape [1, 3, 3, 3, 3], got [1, 3, 4, 4, 4]}}
  %dx, %dw = gopt.conv3d_grad %x, %w, %dy {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>, tensor<1x3x4x4x4xf32>) -> (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>)
  return
}

// -----

func.func @max_pool3d_grad_dy(%x: tensor<1x2x4x4x4xf32>, %dy: tensor<1x2x4x4x4xf32>) {
  // expected-error@+1 {{'gopt.max_pool3d_grad' op expects dy of the forward's result shape [1, 2, 2, 2, 2], got [1, 2, 4, 4, 4]}}
  %dx = gopt.max_pool3d_grad %x, %dy {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  return
}
