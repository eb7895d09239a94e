// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the image ops.

/// conv2d_transpose's input channels are the filter's forward O.
func.func @deconv_channels(%x: tensor<1x5x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv2d_transpose' op expects the input channels (5) to equal the filter's input channels (4); input [1, 5, 4, 4] (NCHW), filter [4, 2, 3, 3] (OIHW)}}
  %0 = gopt.conv2d_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x5x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

/// strides have two entries.
func.func @deconv_strides(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv2d_transpose' op expects strides of 2 entries, got [2]}}
  %0 = gopt.conv2d_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

/// Pads cannot be negative.
func.func @deconv_pads(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'gopt.conv2d_transpose' op expects pads >= 0, got [0, -1, 0, 0]}}
  %0 = gopt.conv2d_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, -1, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

/// Pads that crop everything leave no output.
func.func @deconv_empty(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error@+1 {{'gopt.conv2d_transpose' op expects pads that leave a non-empty output, got output size [0, 1] for input [1, 4, 1, 1] and pads [1, 0, 0, 0]}}
  %0 = gopt.conv2d_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return
}

// -----

/// The bias has one entry per output channel.
func.func @deconv_bias(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.conv2d_transpose' op}}
  %0 = gopt.conv2d_transpose %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

/// resize needs scales or sizes.
func.func @resize_neither(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects scales or sizes}}
  %0 = gopt.resize %x {data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

/// With both, sizes give the output: scales' floor(4 * 2.0) is not it.
func.func @resize_both(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>, sizes = array<i64: 7, 7>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

/// half_pixel_symmetric is a coordinate transformation (ONNX Resize-19).
func.func @resize_bad_ctm(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>, coordinate_transformation_mode = "half_pixel_symetric", data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

/// resize only resizes rank-4 images.
func.func @resize_rank(%x: tensor<2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects a rank-4 input, got shape [2, 4, 4]}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>} : (tensor<2x4x4xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

/// Scales must be positive.
func.func @resize_scales(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects scales > 0, got [2, 0]}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 0.0>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

/// A crop needs its roi.
func.func @resize_roi(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects a roi of 4 entries [h_start, w_start, h_end, w_end] with coordinate_transformation_mode "tf_crop_and_resize"}}
  %0 = gopt.resize %x {sizes = array<i64: 3, 3>, coordinate_transformation_mode = "tf_crop_and_resize", data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

/// Modes come from ODS's value list.
func.func @resize_mode(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects mode "nearest", "linear" or "cubic", got "area"}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>, mode = "area", data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

/// The declared result must match the inferred one.
func.func @resize_result(%x: tensor<1x2x4x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op}}
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x9x8xf32>
  return
}

// -----

/// Sizes cannot be read from an empty image.
func.func @resize_empty(%x: tensor<1x2x0x4xf32>) {
  // expected-error@+1 {{'gopt.resize' op expects an input with non-empty H and W for sizes, got [1, 2, 0, 4]}}
  %0 = gopt.resize %x {sizes = array<i64: 3, 3>, data_format = "NCHW"} : (tensor<1x2x0x4xf32>) -> tensor<1x2x3x3xf32>
  return
}
