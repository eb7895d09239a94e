// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error: each diagnostic names the op, the operand
/// or attribute, what was expected and what was found.

/// conv2d needs a rank-4 input.
func.func @case0(%x: tensor<8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{'gopt.conv2d' op expects a rank-4 input, got shape [8, 8, 3]}}
  %0 = gopt.conv2d %x, %w : (tensor<8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x8x8xf32>
  return
}

// -----

/// conv2d needs a rank-4 filter.
func.func @case1(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x8xf32>) {
  // expected-error@+1 {{'gopt.conv2d' op expects a rank-4 filter, got shape [3, 3, 8]}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d rejects an unknown data_format.
func.func @case2(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{'gopt.conv2d' op expects data_format "NHWC" or "NCHW", got "NWHC"}}
  %0 = gopt.conv2d %x, %w {data_format = "NWHC"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d rejects an unknown filter_format.
func.func @case3(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects filter_format "HWIO" or "OIHW", got "IOHW"}}
  %0 = gopt.conv2d %x, %w {filter_format = "IOHW"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d rejects an unknown activation.
func.func @case4(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects activation "none", "relu", "relu6" or "sigmoid", got "swish"}}
  %0 = gopt.conv2d %x, %w {activation = "swish"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d needs groups >= 1.
func.func @case5(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects groups >= 1, got 0}}
  %0 = gopt.conv2d %x, %w {groups = 0 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d needs a static kernel size.
func.func @case6(%x: tensor<1x8x8x3xf32>, %w: tensor<?x3x3x8xf32>) {
  // expected-error@+1 {{expects a filter with static spatial size, got shape [?, 3, 3, 8]}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<?x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d strides have two values.
func.func @case7(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects strides to have 2 values (H, W), got 4}}
  %0 = gopt.conv2d %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d strides are positive.
func.func @case8(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects strides values >= 1, got [0, 1]}}
  %0 = gopt.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d dilations are positive.
func.func @case9(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects dilations values >= 1, got [1, -1]}}
  %0 = gopt.conv2d %x, %w {dilations = array<i64: 1, -1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d rejects an unknown padding mode.
func.func @case10(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects padding "EXPLICIT", "SAME" or "VALID", got "FULL"}}
  %0 = gopt.conv2d %x, %w {padding = "FULL"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d pads have four values.
func.func @case11(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects pads to have 4 values (top, bottom, left, right), got 2}}
  %0 = gopt.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d pads are non-negative.
func.func @case12(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects non-negative pads, got [1, 1, -1, 1]}}
  %0 = gopt.conv2d %x, %w {pads = array<i64: 1, 1, -1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d pads go only with EXPLICIT padding.
func.func @case13(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{expects pads only with padding "EXPLICIT", got padding "SAME" and pads [1, 1, 1, 1]}}
  %0 = gopt.conv2d %x, %w {padding = "SAME", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d input channels must divide by groups.
func.func @case14(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x1x8xf32>) {
  // expected-error@+1 {{expects input channels (3) divisible by groups (2)}}
  %0 = gopt.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x1x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d output channels must divide by groups.
func.func @case15(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x2x7xf32>) {
  // expected-error@+1 {{expects output channels (7) divisible by groups (2)}}
  %0 = gopt.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x2x7xf32>) -> tensor<1x6x6x7xf32>
  return
}

// -----

/// conv2d filter channels must match the input's (mismatched channels).
func.func @case16(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x4x8xf32>) {
  // expected-error@+1 {{expects the filter's input channels (4) times groups (1) to equal the input channels (3); input [1, 8, 8, 3] (NHWC), filter [3, 3, 4, 8] (HWIO)}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<3x3x4x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d bias is 1-D.
func.func @case17(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<1x8xf32>) {
  // expected-error@+1 {{expects bias to be 1-D with one value per channel, got shape [1, 8]}}
  %0 = gopt.conv2d %x, %w, %b : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>, tensor<1x8xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d bias has one value per output channel.
func.func @case18(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{expects bias to have 8 elements (one per channel), got 4}}
  %0 = gopt.conv2d %x, %w, %b : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>, tensor<4xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d window must fit the padded input.
func.func @case19(%x: tensor<1x2x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+1 {{has a window of 3 (kernel 3, dilation 1) larger than the padded input size 2 in spatial dimension H}}
  %0 = gopt.conv2d %x, %w : (tensor<1x2x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x1x6x8xf32>
  return
}

// -----

/// conv2d operands share an element type.
func.func @case20(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf16>) {
  // expected-error@+1 {{expects filter to have element type 'f32' (that of input), got 'f16'}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf16>) -> tensor<1x6x6x8xf32>
  return
}

// -----

/// conv2d's declared result must agree with the inferred one.
func.func @case21(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x8xf32>) {
  // expected-error@+2 {{'gopt.conv2d' op inferred type(s) 'tensor<1x6x6x8xf32>' are incompatible with return type(s) of operation 'tensor<1x8x8x8xf32>'}}
  // expected-error@+1 {{'gopt.conv2d' op failed to infer returned types}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

/// conv2d takes float tensors.
func.func @case22(%x: tensor<1x8x8x3xi32>, %w: tensor<3x3x3x8xi32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = gopt.conv2d %x, %w : (tensor<1x8x8x3xi32>, tensor<3x3x3x8xi32>) -> tensor<1x6x6x8xi32>
  return
}

// -----

/// batch_norm needs rank >= 2.
func.func @case23(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.batch_norm' op expects an input of rank >= 2, got rank 1}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

/// batch_norm rejects an unknown data_format.
func.func @case24(%x: tensor<1x4x4x8xf32>, %c: tensor<8xf32>) {
  // expected-error@+1 {{expects data_format "NHWC" or "NCHW", got "CHWN"}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c {data_format = "CHWN"} : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// batch_norm parameters are 1-D.
func.func @case25(%x: tensor<1x4x4x8xf32>, %c: tensor<1x8xf32>) {
  // expected-error@+1 {{expects scale to be 1-D with one value per channel, got shape [1, 8]}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c : (tensor<1x4x4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// batch_norm parameters have one value per channel (NCHW: axis 1).
func.func @case26(%x: tensor<1x4x4x8xf32>, %c: tensor<8xf32>) {
  // expected-error@+1 {{expects scale to have 4 elements (one per channel), got 8}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c {data_format = "NCHW"} : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// batch_norm epsilon is non-negative.
func.func @case27(%x: tensor<1x4x4x8xf32>, %c: tensor<8xf32>) {
  // expected-error@+1 {{expects epsilon >= 0, got -1}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c {epsilon = -1.0 : f32} : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// batch_norm momentum is in [0, 1].
func.func @case28(%x: tensor<1x4x4x8xf32>, %c: tensor<8xf32>) {
  // expected-error@+1 {{expects momentum in [0, 1], got 1.5}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c {momentum = 1.5 : f32} : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// batch_norm parameters share the input's element type.
func.func @case29(%x: tensor<1x4x4x8xf32>, %c: tensor<8xbf16>) {
  // expected-error@+1 {{expects scale to have element type 'f32' (that of x), got 'bf16'}}
  %0 = gopt.batch_norm %x, %c, %c, %c, %c : (tensor<1x4x4x8xf32>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// bias_add needs rank >= 2.
func.func @case30(%x: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'gopt.bias_add' op expects an input of rank >= 2, got rank 1}}
  %0 = gopt.bias_add %x, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

/// bias_add bias matches the channel count.
func.func @case31(%x: tensor<1x4x4x8xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{expects bias to have 8 elements (one per channel), got 4}}
  %0 = gopt.bias_add %x, %b : (tensor<1x4x4x8xf32>, tensor<4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// bias_add rejects an unknown data_format.
func.func @case32(%x: tensor<1x4x4x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{expects data_format "NHWC" or "NCHW", got "HWCN"}}
  %0 = gopt.bias_add %x, %b {data_format = "HWCN"} : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

/// matmul needs rank >= 2.
func.func @case33(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error@+1 {{'gopt.matmul' op expects operands of rank >= 2, got [4] and [4, 2]}}
  %0 = gopt.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}

// -----

/// matmul contraction dimensions match.
func.func @case34(%a: tensor<3x5xf32>, %b: tensor<4x2xf32>) {
  // expected-error@+1 {{expects matching contraction dimensions, got 5 (a [3, 5]) and 4 (b [4, 2])}}
  %0 = gopt.matmul %a, %b : (tensor<3x5xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return
}

// -----

/// matmul batch dimensions broadcast.
func.func @case35(%a: tensor<2x3x5xf32>, %b: tensor<3x5x2xf32>) {
  // expected-error@+1 {{cannot broadcast operand shapes [2] and [3]}}
  %0 = gopt.matmul %a, %b : (tensor<2x3x5xf32>, tensor<3x5x2xf32>) -> tensor<2x3x2xf32>
  return
}

// -----

/// max_pool needs a rank-4 input.
func.func @case36(%x: tensor<4x4x8xf32>) {
  // expected-error@+1 {{'gopt.max_pool' op expects a rank-4 input, got shape [4, 4, 8]}}
  %0 = gopt.max_pool %x {kernel = array<i64: 2, 2>} : (tensor<4x4x8xf32>) -> tensor<3x3x8xf32>
  return
}

// -----

/// max_pool kernel has two values.
func.func @case37(%x: tensor<1x4x4x8xf32>) {
  // expected-error@+1 {{expects kernel to have 2 values (H, W), got 1}}
  %0 = gopt.max_pool %x {kernel = array<i64: 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x3x3x8xf32>
  return
}

// -----

/// avg_pool kernel is positive.
func.func @case38(%x: tensor<1x4x4x8xf32>) {
  // expected-error@+1 {{'gopt.avg_pool' op expects kernel values >= 1, got [0, 2]}}
  %0 = gopt.avg_pool %x {kernel = array<i64: 0, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x3x3x8xf32>
  return
}

// -----

/// global_avg_pool needs a rank-4 input.
func.func @case39(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.global_avg_pool' op expects a rank-4 input, got rank 2}}
  %0 = gopt.global_avg_pool %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// softmax axis is in range.
func.func @case40(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.softmax' op expects axis in [-2, 2) for a rank-2 operand, got 2}}
  %0 = gopt.softmax %x {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// reduce axes are in range.
func.func @case41(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.reduce_mean' op expects axes in [-2, 2) for a rank-2 operand, got 3}}
  %0 = gopt.reduce_mean %x {axes = array<i64: 3>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

/// reduce axes are distinct.
func.func @case42(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.reduce_sum' op expects distinct axes, got [1, -1]}}
  %0 = gopt.reduce_sum %x {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

/// reshape allows one -1.
func.func @case43(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.reshape' op expects at most one -1 in shape, got [-1, -1]}}
  %0 = gopt.reshape %x {shape = array<i64: -1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// reshape entries are >= -1.
func.func @case44(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects shape entries >= -1, got [-2, 16]}}
  %0 = gopt.reshape %x {shape = array<i64: -2, 16>} : (tensor<4x8xf32>) -> tensor<2x16xf32>
  return
}

// -----

/// reshape keeps the element count.
func.func @case45(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{cannot reshape [4, 8] (32 elements) to [5, 6] (30 elements)}}
  %0 = gopt.reshape %x {shape = array<i64: 5, 6>} : (tensor<4x8xf32>) -> tensor<5x6xf32>
  return
}

// -----

/// reshape's -1 must divide the element count.
func.func @case46(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{cannot reshape [4, 8] (32 elements) to [-1, 5]}}
  %0 = gopt.reshape %x {shape = array<i64: -1, 5>} : (tensor<4x8xf32>) -> tensor<6x5xf32>
  return
}

// -----

/// flatten axis is in range.
func.func @case47(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.flatten' op expects axis in [-2, 2], got 3}}
  %0 = gopt.flatten %x {axis = 3 : i64} : (tensor<4x8xf32>) -> tensor<32x1xf32>
  return
}

// -----

/// transpose perm has one entry per dimension.
func.func @case48(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.transpose' op expects perm to have 2 entries (the operand's rank), got [0, 1, 2]}}
  %0 = gopt.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// transpose perm is a permutation.
func.func @case49(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects perm to be a permutation of [0, 2), got [1, 1]}}
  %0 = gopt.transpose %x {perm = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

/// concat operands have equal rank.
func.func @case50(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.concat' op expects operands of equal rank, operand #1 has shape [4], operand #0 [4, 8]}}
  %0 = gopt.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<8x8xf32>
  return
}

// -----

/// concat operands match off the axis.
func.func @case51(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error@+1 {{expects operand dimensions to match except along axis 0, operand #1 has shape [4, 7], operand #0 [4, 8]}}
  %0 = gopt.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x7xf32>) -> tensor<8x8xf32>
  return
}

// -----

/// concat axis is in range.
func.func @case52(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{expects axis in [-2, 2) for a rank-2 operand, got -3}}
  %0 = gopt.concat %a {axis = -3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// slice has one start, end and step per dimension.
func.func @case53(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.slice' op expects starts, ends and steps with 2 entries each (the operand's rank), got 1, 2 and 2}}
  %0 = gopt.slice %x {starts = array<i64: 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

/// slice starts are non-negative.
func.func @case54(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects non-negative starts, got [-1, 0]}}
  %0 = gopt.slice %x {starts = array<i64: -1, 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

/// slice steps are non-zero.
func.func @case55(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects non-zero steps, got [1, 0]}}
  %0 = gopt.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

/// slice ends are not below starts going forward.
func.func @case56(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects ends >= starts where the step is positive, got starts [3, 0] and ends [2, 2]}}
  %0 = gopt.slice %x {starts = array<i64: 3, 0>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<0x2xf32>
  return
}

// -----

/// backward slice ends are not above starts nor below -1.
func.func @case56b(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects -1 <= ends <= starts where the step is negative, got starts [3, 0] and ends [-2, 2]}}
  %0 = gopt.slice %x {starts = array<i64: 3, 0>, ends = array<i64: -2, 2>, steps = array<i64: -1, 1>} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return
}

// -----

/// pad has two entries per dimension.
func.func @case57(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'gopt.pad' op expects pads to have 4 entries (before and after for each of 2 dimensions), got 2}}
  %0 = gopt.pad %x {pads = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<6x8xf32>
  return
}

// -----

/// pad amounts are non-negative.
func.func @case58(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects non-negative pads, got [1, -1, 0, 0]}}
  %0 = gopt.pad %x {pads = array<i64: 1, -1, 0, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

/// pad rejects an unknown mode.
func.func @case59(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects mode "constant", "reflect", "edge" or "wrap", got "circular"}}
  %0 = gopt.pad %x {pads = array<i64: 1, 1, 0, 0>, mode = "circular"} : (tensor<4x8xf32>) -> tensor<6x8xf32>
  return
}

// -----

/// reflect padding stays inside the dimension.
func.func @case60(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{expects reflect padding smaller than the dimension (4) in dimension 0, got 4 and 0}}
  %0 = gopt.pad %x {pads = array<i64: 4, 0, 0, 0>, mode = "reflect"} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

/// binary operands broadcast.
func.func @case61(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error@+1 {{'gopt.add' op cannot broadcast operand shapes [2, 3] and [4, 3]: dimension 0 of the result is 2 vs. 4}}
  %0 = gopt.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// binary operands share an element type.
func.func @case62(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error@+1 {{'gopt.mul' op requires the same element type for all operands and results}}
  %0 = gopt.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return
}

// -----

/// unary float ops reject integers.
func.func @case63(%a: tensor<2x3xi32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = gopt.relu %a : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return
}

// -----

/// dropout ratio is in [0, 1).
func.func @case64(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.dropout' op expects ratio in [0, 1), got 1}}
  %0 = gopt.dropout %a {ratio = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

/// gelu approximate is none or tanh.
func.func @case65(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.gelu' op expects approximate "none" or "tanh", got "sigmoid"}}
  %0 = gopt.gelu %a {approximate = "sigmoid"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

/// clip needs min <= max.
func.func @case66(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.clip' op expects min <= max, got min 6.000000e+00 and max 0.000000e+00}}
  %0 = gopt.clip %a {min = 6.0 : f32, max = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

/// cast keeps the shape.
func.func @case67(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.cast' op requires the same shape for all operands and results}}
  %0 = gopt.cast %a : (tensor<2x3xf32>) -> tensor<3x2xf16>
  return
}

// -----

/// identity's result is its operand's type.
func.func @case68(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.identity' op requires the same type for all operands and results}}
  %0 = gopt.identity %a : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return
}

// -----

/// device is cpu or gpu.
func.func @case69(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.relu' op expects device "cpu" or "gpu", got "tpu"}}
  %0 = gopt.relu %a {device = "tpu"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

/// ops take ranked tensors only.
func.func @case70(%a: tensor<*xf32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = gopt.relu %a : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

/// element types are limited to what the backends run.
func.func @case71(%a: tensor<2xf80>, %b: tensor<2xf80>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values}}
  %0 = gopt.add %a, %b : (tensor<2xf80>, tensor<2xf80>) -> tensor<2xf80>
  return
}

// -----

/// transfer devices are cpu or gpu.
func.func @transfer_device(%a: tensor<2xf32>) {
  // expected-error@+1 {{'gopt.transfer' op expects devices "cpu" or "gpu", got "tpu"}}
  %0 = gopt.transfer %a {from = "cpu", to = "tpu"} : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

/// dequantize needs one scale per channel along axis, or one.
func.func @dequantize_scale_count(%q: tensor<4x3xi8>, %s: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.dequantize' op expects 4 scales (dimension 0 of values [4, 3]) or 1 (per-tensor), got 3}}
  %0 = gopt.dequantize %q, %s {axis = 0 : i64} : (tensor<4x3xi8>, tensor<3xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// dequantize scales are rank 1.
func.func @dequantize_scale_rank(%q: tensor<4x3xi8>, %s: tensor<4x1xf32>) {
  // expected-error@+1 {{'gopt.dequantize' op expects rank-1 scales (one per channel along axis 0, or one for the whole tensor), got rank 2}}
  %0 = gopt.dequantize %q, %s : (tensor<4x3xi8>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// dequantize's axis is a dimension of the values.
func.func @dequantize_axis(%q: tensor<4x3xi8>, %s: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.dequantize' op expects axis in [-2, 2) for a rank-2 operand, got 2}}
  %0 = gopt.dequantize %q, %s {axis = 2 : i64} : (tensor<4x3xi8>, tensor<1xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// dequantize reads int8 values.
func.func @dequantize_values_type(%q: tensor<4x3xi32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.dequantize' op operand #0 must be ranked tensor of 8-bit signless integer values, but got 'tensor<4x3xi32>'}}
  %0 = gopt.dequantize %q, %s : (tensor<4x3xi32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// dequantize's result has the values' shape.
func.func @dequantize_result_shape(%q: tensor<4x3xi8>, %s: tensor<4xf32>) {
  // expected-error@+2 {{'gopt.dequantize' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<3x4xf32>'}}
  // expected-error@+1 {{'gopt.dequantize' op failed to infer returned types}}
  %0 = gopt.dequantize %q, %s : (tensor<4x3xi8>, tensor<4xf32>) -> tensor<3x4xf32>
  return
}

// -----

/// quantize needs one scale per channel along axis, or one.
func.func @quantize_scale_count(%x: tensor<4x3xf32>, %s: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.quantize' op expects 4 scales (dimension 0 of values [4, 3]) or 1 (per-tensor), got 3}}
  %0 = gopt.quantize %x, %s {axis = 0 : i64} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi8>
  return
}

// -----

/// quantize produces int8.
func.func @quantize_result_type(%x: tensor<4x3xf32>, %s: tensor<1xf32>) {
  // expected-error@+1 {{'gopt.quantize' op result #0 must be ranked tensor of 8-bit signless integer values, but got 'tensor<4x3xi32>'}}
  %0 = gopt.quantize %x, %s : (tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xi32>
  return
}

// -----

// Global batch statistics (cross_replica) are a training-form notion.
func.func @cross_replica_inference(%x: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'gopt.batch_norm' op cross_replica statistics need the training form (training = true)}}
  %y = gopt.batch_norm %x, %c, %c, %c, %c {cross_replica = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
