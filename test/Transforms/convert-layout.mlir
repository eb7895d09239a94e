// RUN: gopt-opt %s -split-input-file -verify-each -gopt-convert-layout=layout=NCHW | FileCheck %s

/// An NHWC conv with a constant HWIO filter becomes NCHW with an OIHW filter
/// transposed at compile time; transposes only at the boundary (the one on
/// a single-channel output moves no data and is a reshape).
// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x5x5x2xf32>)
func.func @conv(%x: tensor<1x5x5x2xf32>) -> tensor<1x5x5x1xf32> {
  // CHECK: %[[W:.*]] = gopt.constant dense<{{\[\[\[}}[1.000000e+00, 2.000000e+00]], {{\[\[}}3.000000e+00, 4.000000e+00]]]]> : tensor<1x2x1x2xf32>
  // CHECK: %[[T:.*]] = gopt.transpose %[[X]] {perm = array<i64: 0, 3, 1, 2>}
  // CHECK: %[[C:.*]] = gopt.conv2d %[[T]], %[[W]] {data_format = "NCHW", filter_format = "OIHW", padding = "SAME"}
  // CHECK: %[[R:.*]] = gopt.reshape %[[C]] {shape = array<i64: 1, 5, 5, 1>}
  // CHECK: return %[[R]]
  %w = gopt.constant dense<[[[[1.0], [3.0]], [[2.0], [4.0]]]]> : tensor<1x2x2x1xf32>
  %c = gopt.conv2d %x, %w {padding = "SAME"} : (tensor<1x5x5x2xf32>, tensor<1x2x2x1xf32>) -> tensor<1x5x5x1xf32>
  return %c : tensor<1x5x5x1xf32>
}

// -----

/// conv -> bias_add -> relu -> max_pool -> batch_norm: the transposes
/// between converted ops cancel, relu is crossed, one pair remains.
// CHECK-LABEL: func @chain
func.func @chain(%x: tensor<?x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  // CHECK: gopt.transpose
  // CHECK: gopt.conv2d {{.*}}{data_format = "NCHW", padding = "SAME"}
  // CHECK-NOT: gopt.transpose
  // CHECK: gopt.bias_add {{.*}}data_format = "NCHW"
  // CHECK-NOT: gopt.transpose
  // CHECK: gopt.relu
  // CHECK-NOT: gopt.transpose
  // CHECK: gopt.max_pool {{.*}}data_format = "NCHW"
  // CHECK-NOT: gopt.transpose
  // CHECK: gopt.batch_norm {{.*}}data_format = "NCHW"
  // CHECK: gopt.transpose
  // CHECK-NOT: gopt.transpose
  %c = gopt.conv2d %x, %w {padding = "SAME"} : (tensor<?x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<?x8x8x4xf32>
  %a = gopt.bias_add %c, %b : (tensor<?x8x8x4xf32>, tensor<4xf32>) -> tensor<?x8x8x4xf32>
  %r = gopt.relu %a : (tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  %p = gopt.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x8x8x4xf32>) -> tensor<?x4x4x4xf32>
  %y = gopt.batch_norm %p, %b, %b, %b, %b : (tensor<?x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %y : tensor<?x4x4x4xf32>
}

// -----

/// Axis-carrying ops after a converted op get their axes rewritten: concat
/// on C (3 -> 1), pad on H/W, reduce_mean over H, W without keep_dims, and
/// the [N,C,1,1] -> [N,1,1,C] transpose after global pooling is a reshape.
// CHECK-LABEL: func @axes
func.func @axes(%x: tensor<1x4x4x2xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x4xf32>, tensor<1x2xf32>) {
  // CHECK: %[[P:.*]] = gopt.avg_pool {{.*}}data_format = "NCHW"
  // CHECK: %[[CAT:.*]] = gopt.concat %[[P]], %[[P]] {axis = 1 : i64}
  // CHECK: %[[PAD:.*]] = gopt.pad %[[CAT]] {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>}
  // CHECK: gopt.transpose %[[PAD]] {perm = array<i64: 0, 2, 3, 1>}
  // CHECK: gopt.reduce_mean %[[CAT]] {axes = array<i64: 2, 3>}
  // CHECK: %[[G:.*]] = gopt.global_avg_pool {{.*}}data_format = "NCHW"
  // CHECK: gopt.reshape %[[G]] {shape = array<i64: 1, 2>}
  %p = gopt.avg_pool %x {kernel = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %cat = gopt.concat %p, %p {axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %pad = gopt.pad %cat {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x4xf32>) -> tensor<1x6x6x4xf32>
  %m = gopt.reduce_mean %cat {axes = array<i64: 1, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4xf32>
  %g = gopt.global_avg_pool %x : (tensor<1x4x4x2xf32>) -> tensor<1x1x1x2xf32>
  %f = gopt.reshape %g {shape = array<i64: 1, 2>} : (tensor<1x1x1x2xf32>) -> tensor<1x2xf32>
  return %pad, %m, %f : tensor<1x6x6x4xf32>, tensor<1x4xf32>, tensor<1x2xf32>
}

// -----

/// A residual add of two converted branches and a per-channel constant add
/// stay in NCHW; the constant is transposed at compile time.
// CHECK-LABEL: func @residual
func.func @residual(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK: %[[T:.*]] = gopt.transpose
  // CHECK: %[[C1:.*]] = gopt.conv2d %[[T]]
  // CHECK: %[[C2:.*]] = gopt.conv2d %[[C1]]
  // CHECK: %[[S:.*]] = gopt.add %[[C2]], %[[T]] : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>)
  // CHECK: gopt.add %[[S]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>)
  // CHECK: gopt.transpose
  // CHECK-NOT: gopt.transpose
  %k = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c1 = gopt.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %c2 = gopt.conv2d %c1, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %s = gopt.add %c2, %x : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %t = gopt.add %s, %k : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %t : tensor<1x4x4x2xf32>
}

// -----

/// Ops already in the target layout, and rank-2 bias_add, are untouched.
// CHECK-LABEL: func @already_nchw
func.func @already_nchw(%x: tensor<1x2x4x4xf32>, %m: tensor<3x2xf32>, %b: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<3x2xf32>) {
  // CHECK-NOT: gopt.transpose
  %p = gopt.max_pool %x {kernel = array<i64: 1, 1>, data_format = "NCHW"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = gopt.bias_add %m, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %p, %a : tensor<1x2x4x4xf32>, tensor<3x2xf32>
}

// -----

/// A training dropout draws its mask by element index and its dropout_grad
/// must see the same order, so transposes do not sink through it (they do
/// through the relu after the pool).
// CHECK-LABEL: func @training_dropout_stays
// CHECK: %[[P:.*]] = gopt.max_pool {{.*}}data_format = "NCHW"
// CHECK: %[[R:.*]] = gopt.relu %[[P]] : (tensor<1x2x2x2xf32>)
// CHECK: %[[T:.*]] = gopt.transpose %[[R]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK: gopt.dropout %[[T]] {{.*}}training = true{{.*}} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
func.func @training_dropout_stays(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %p = gopt.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  %r = gopt.relu %p : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %d = gopt.dropout %r {ratio = 0.5 : f32, seed = 7 : i64, training = true} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %d : tensor<1x2x2x2xf32>
}
