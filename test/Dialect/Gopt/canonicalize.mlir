// RUN: gopt-opt %s -split-input-file -canonicalize | FileCheck %s

/// A transpose of a transpose composes into one.
// CHECK-LABEL: func @compose_transposes
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x8x3xf32>)
func.func @compose_transposes(%x: tensor<1x8x8x3xf32>) -> tensor<8x3x1x8xf32> {
  // CHECK: %[[T:.*]] = gopt.transpose %[[X]] {perm = array<i64: 1, 3, 0, 2>}
  // CHECK-NOT: gopt.transpose
  // CHECK: return %[[T]]
  %0 = gopt.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
  %1 = gopt.transpose %0 {perm = array<i64: 2, 1, 0, 3>} : (tensor<1x3x8x8xf32>) -> tensor<8x3x1x8xf32>
  return %1 : tensor<8x3x1x8xf32>
}

// -----

/// NHWC -> NCHW -> NHWC cancels completely.
// CHECK-LABEL: func @cancel_transposes
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x8x3xf32>)
func.func @cancel_transposes(%x: tensor<?x8x8x3xf32>) -> tensor<?x8x8x3xf32> {
  // CHECK-NOT: gopt.transpose
  // CHECK: return %[[X]]
  %0 = gopt.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<?x8x8x3xf32>) -> tensor<?x3x8x8xf32>
  %1 = gopt.transpose %0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x3x8x8xf32>) -> tensor<?x8x8x3xf32>
  return %1 : tensor<?x8x8x3xf32>
}

// -----

/// Identity and inference-mode dropout fold away; stop_gradient and
/// check_numerics stay (they matter for training and debugging).
// CHECK-LABEL: func @pass_through_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @pass_through_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: gopt.identity
  // CHECK-NOT: gopt.dropout
  // CHECK: %[[S:.*]] = gopt.stop_gradient %[[X]]
  // CHECK: %[[C:.*]] = gopt.check_numerics %[[S]]
  // CHECK: return %[[C]]
  %0 = gopt.identity %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = gopt.dropout %0 {ratio = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = gopt.stop_gradient %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = gopt.check_numerics %2 {message = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

/// Training-mode dropout is random and stays.
// CHECK-LABEL: func @training_dropout_stays
func.func @training_dropout_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: gopt.dropout
  %0 = gopt.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// reshape(reshape(x)) becomes one reshape; a reshape to the same static
/// type disappears.
// CHECK-LABEL: func @combine_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @combine_reshapes(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  // CHECK: %[[R:.*]] = gopt.reshape %[[X]] {shape = array<i64: 4, 6>}
  // CHECK: return %[[R]], %[[X]]
  %0 = gopt.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = gopt.reshape %0 {shape = array<i64: 4, 6>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %2 = gopt.reshape %x {shape = array<i64: 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %1, %2 : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

/// Reshaping a constant is a constant.
// CHECK-LABEL: func @reshape_constant
func.func @reshape_constant() -> tensor<2x2xf32> {
  // CHECK: %[[C:.*]] = gopt.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  // CHECK-NOT: gopt.reshape
  // CHECK: return %[[C]]
  %c = gopt.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = gopt.reshape %c {shape = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

/// A cast to the same type folds; an exact round trip f16 -> f32 -> f16
/// cancels; a lossy one (f32 -> f16 -> f32) stays.
// CHECK-LABEL: func @casts
// CHECK-SAME: (%[[H:.*]]: tensor<4xf16>, %[[F:.*]]: tensor<4xf32>)
func.func @casts(%h: tensor<4xf16>, %f: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[DOWN:.*]] = gopt.cast %[[F]] : (tensor<4xf32>) -> tensor<4xf16>
  // CHECK: %[[UP:.*]] = gopt.cast %[[DOWN]] : (tensor<4xf16>) -> tensor<4xf32>
  // CHECK: return %[[H]], %[[UP]], %[[F]]
  %0 = gopt.cast %h : (tensor<4xf16>) -> tensor<4xf32>
  %1 = gopt.cast %0 : (tensor<4xf32>) -> tensor<4xf16>
  %2 = gopt.cast %f : (tensor<4xf32>) -> tensor<4xf16>
  %3 = gopt.cast %2 : (tensor<4xf16>) -> tensor<4xf32>
  %4 = gopt.cast %f : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %3, %4 : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
}

// -----

/// shape of a static tensor is a constant.
// CHECK-LABEL: func @static_shape
func.func @static_shape(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  // CHECK: %[[C:.*]] = gopt.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK: %[[S:.*]] = gopt.shape %{{.*}} : (tensor<?x3xf32>)
  // CHECK: return %[[C]], %[[S]]
  %0 = gopt.shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = gopt.shape %y : (tensor<?x3xf32>) -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

/// Dead pure ops go; check_numerics (an effect) stays.
// CHECK-LABEL: func @dead_code
func.func @dead_code(%x: tensor<4xf32>) {
  // CHECK-NOT: gopt.relu
  // CHECK: gopt.check_numerics
  %0 = gopt.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = gopt.check_numerics %x {message = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

/// A transfer to the device the value is on folds away.
// CHECK-LABEL: func @same_device_transfer
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @same_device_transfer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: gopt.transfer
  // CHECK: return %[[X]]
  %0 = gopt.transfer %x {from = "gpu", to = "gpu"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Zero padding of the spatial dims folds into the conv's explicit pads
// (TF's Pad + VALID Conv2D), added to pads the conv already has.
// CHECK-LABEL: func @fold_zero_pad_into_conv_nchw
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NOT: gopt.pad
// CHECK: gopt.conv2d %[[X]], %[[W]] {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 2, 1, 2>, strides = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<1x4x5x5xf32>
func.func @fold_zero_pad_into_conv_nchw(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %p = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = gopt.conv2d %p, %w {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}

// -----

// NHWC, VALID padding.
// CHECK-LABEL: func @fold_zero_pad_into_conv_nhwc_valid
// CHECK-NOT: gopt.pad
// CHECK: gopt.conv2d %arg0, %arg1 {pads = array<i64: 1, 1, 1, 1>}
func.func @fold_zero_pad_into_conv_nhwc_valid(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %p = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x10x10x3xf32>
  %y = gopt.conv2d %p, %w {padding = "VALID"} : (tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  return %y : tensor<1x8x8x4xf32>
}

// -----

// Left alone: a non-zero pad value, channel padding, and SAME padding.
// CHECK-LABEL: func @pad_not_folded_into_conv
// CHECK-COUNT-3: gopt.pad
func.func @pad_not_folded_into_conv(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %w5: tensor<3x3x5x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x6x6x4xf32>, tensor<1x10x10x4xf32>) {
  %p1 = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, value = 1.0 : f32} : (tensor<1x8x8x3xf32>) -> tensor<1x10x10x3xf32>
  %y1 = gopt.conv2d %p1, %w {padding = "VALID"} : (tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %p2 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x5xf32>
  %y2 = gopt.conv2d %p2, %w5 {padding = "VALID"} : (tensor<1x8x8x5xf32>, tensor<3x3x5x4xf32>) -> tensor<1x6x6x4xf32>
  %p3 = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x10x10x3xf32>
  %y3 = gopt.conv2d %p3, %w {padding = "SAME"} : (tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x10x10x4xf32>
  return %y1, %y2, %y3 : tensor<1x8x8x4xf32>, tensor<1x6x6x4xf32>, tensor<1x10x10x4xf32>
}

// -----

/// Anything else stays: another divisor, or a clip that is not [0, 6].
// CHECK-LABEL: func @not_hard_swish
// CHECK-NOT: gopt.hard_
// CHECK: return
func.func @not_hard_swish(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %three = gopt.constant dense<3.0> : tensor<f32>
  %five = gopt.constant dense<5.0> : tensor<f32>
  %six = gopt.constant dense<6.0> : tensor<f32>
  %shifted = gopt.add %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %ramp = gopt.clip %shifted {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %a = gopt.div %ramp, %five : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %wide = gopt.clip %shifted {min = 0.0 : f32, max = 7.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %b = gopt.div %wide, %six : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

/// GELU as PyTorch exports nn.GELU (x / sqrt(2), erf, + 1, times x, times
/// 0.5), and with x * 0.5 first and 1/sqrt(2) as a multiplier, becomes one
/// gelu: one kernel, which the CPU schedule folds into a matmul before it.
// CHECK-LABEL: func @decomposed_gelu
// CHECK-NOT: gopt.erf
// CHECK: %[[A:.*]] = gopt.gelu %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[B:.*]] = gopt.gelu %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: return %[[A]], %[[B]]
func.func @decomposed_gelu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = gopt.constant dense<1.41421354> : tensor<f32>
  %one = gopt.constant dense<1.0> : tensor<f32>
  %half = gopt.constant dense<0.5> : tensor<f32>
  %d = gopt.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = gopt.erf %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = gopt.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = gopt.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = gopt.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %rsqrt2 = gopt.constant dense<0.707106769> : tensor<f32>
  %h = gopt.mul %half, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %d2 = gopt.mul %x, %rsqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e2 = gopt.erf %d2 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a2 = gopt.add %one, %e2 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g2 = gopt.mul %h, %a2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g, %g2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

/// Not GELU: another scale inside erf, or another factor than 0.5.
// CHECK-LABEL: func @not_gelu
// CHECK-NOT: gopt.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %two = gopt.constant dense<2.0> : tensor<f32>
  %one = gopt.constant dense<1.0> : tensor<f32>
  %half = gopt.constant dense<0.5> : tensor<f32>
  %third = gopt.constant dense<0.333> : tensor<f32>
  %d = gopt.div %x, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = gopt.erf %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = gopt.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = gopt.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = gopt.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %sqrt2 = gopt.constant dense<1.41421354> : tensor<f32>
  %d2 = gopt.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e2 = gopt.erf %d2 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a2 = gopt.add %e2, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m2 = gopt.mul %x, %a2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g2 = gopt.mul %m2, %third : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %g, %g2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

/// A pad of nothing (PyTorch exports avg_pool2d as one, then the pool)
/// folds away; a real pad stays.
// CHECK-LABEL: func @empty_pad
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x6x6xf32>)
func.func @empty_pad(%x: tensor<?x4x6x6xf32>) -> (tensor<?x4x6x6xf32>, tensor<?x4x8x8xf32>) {
  // CHECK: %[[P:.*]] = gopt.pad %[[X]] {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>}
  // CHECK-NOT: gopt.pad
  // CHECK: return %[[X]], %[[P]]
  %0 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %1 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<?x4x6x6xf32>) -> tensor<?x4x8x8xf32>
  return %0, %1 : tensor<?x4x6x6xf32>, tensor<?x4x8x8xf32>
}
