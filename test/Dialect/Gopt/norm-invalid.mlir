// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the normalization ops.

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.layer_norm' op expects axis in [-2, 2) for a rank-2 operand, got 2}}
  %0 = gopt.layer_norm %x, %g, %g {axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.layer_norm' op expects scale [4] to broadcast to the normalized dimensions [8]}}
  %0 = gopt.layer_norm %x, %g, %b : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_bias_rank(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<2x8xf32>) {
  // expected-error@+1 {{'gopt.layer_norm' op expects bias [2, 8] to broadcast to the normalized dimensions [8]}}
  %0 = gopt.layer_norm %x, %g, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.layer_norm' op expects epsilon >= 0, got -1}}
  %0 = gopt.layer_norm %x, %g, %g {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @instance_norm_rank(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.instance_norm' op expects an input of rank >= 3 (batch, channels and at least one spatial dimension), got shape [2, 8]}}
  %0 = gopt.instance_norm %x, %s, %s : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @instance_norm_channels(%x: tensor<1x8x4x4xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.instance_norm' op expects scale to have 8 elements (one per channel), got 4}}
  %0 = gopt.instance_norm %x, %s, %s {data_format = "NCHW"} : (tensor<1x8x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @instance_norm_format(%x: tensor<1x8x4x4xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.instance_norm' op expects data_format "NHWC" or "NCHW", got "CHWN"}}
  %0 = gopt.instance_norm %x, %s, %s {data_format = "CHWN"} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @lrn_size(%x: tensor<1x8x4x4xf32>) {
  // expected-error@+1 {{'gopt.lrn' op expects size >= 1, got 0}}
  %0 = gopt.lrn %x {size = 0 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @lrn_type(%x: tensor<1x8x4x4xi32>) {
  // expected-error@+1 {{'gopt.lrn' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = gopt.lrn %x {size = 3 : i64} : (tensor<1x8x4x4xi32>) -> tensor<1x8x4x4xi32>
  return
}
