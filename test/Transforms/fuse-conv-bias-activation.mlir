// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fuse-conv-bias-activation | FileCheck %s

/// conv2d + bias_add + relu becomes one conv2d.
// CHECK-LABEL: func @bias_add_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x3xf32>, %[[W:.*]]: tensor<3x3x3x8xf32>, %[[B:.*]]: tensor<8xf32>)
func.func @bias_add_relu(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK-NEXT: %[[Y:.*]] = gopt.conv2d %[[X]], %[[W]], %[[B]] {activation = "relu", padding = "SAME"}
  // CHECK-NEXT: return %[[Y]]
  %c = gopt.conv2d %x, %w {padding = "SAME"} : (tensor<1x4x4x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x4x4x8xf32>
  %a = gopt.bias_add %c, %b : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %r = gopt.relu %a : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

/// add of a [C,1,1] constant after an NCHW conv that already has a bias:
/// the biases are summed at compile time; clip [0, 6] is relu6.
// CHECK-LABEL: func @add_constant_relu6
func.func @add_constant_relu6(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[B:.*]] = gopt.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>
  // CHECK: gopt.conv2d %{{.*}}, %{{.*}}, %[[B]] {activation = "relu6", data_format = "NCHW", filter_format = "OIHW"}
  // CHECK-NOT: gopt.clip
  %b0 = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b1 = gopt.constant dense<0.5> : tensor<2x1x1xf32>
  %c = gopt.conv2d %x, %w, %b0 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %a = gopt.add %b1, %c : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = gopt.clip %a {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

/// sigmoid fuses without a bias.
// CHECK-LABEL: func @sigmoid
func.func @sigmoid(%x: tensor<1x4x4x3xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32> {
  // CHECK: gopt.conv2d {{.*}}{activation = "sigmoid"}
  // CHECK-NOT: gopt.sigmoid
  %c = gopt.conv2d %x, %w : (tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32>
  %r = gopt.sigmoid %c : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}

// -----

/// The conv's result is used twice: nothing fuses. An add of a full-size
/// tensor, or a clip other than [0, 6], is not a bias or an activation.
// CHECK-LABEL: func @not_fusable
func.func @not_fusable(%x: tensor<1x4x4x3xf32>, %w: tensor<1x1x3x3xf32>, %b: tensor<3xf32>, %y: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  // CHECK: gopt.bias_add
  // CHECK: gopt.add
  // CHECK: gopt.clip
  // CHECK-NOT: activation
  %c = gopt.conv2d %x, %w : (tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32>
  %a = gopt.bias_add %c, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %c2 = gopt.conv2d %x, %w : (tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32>
  %s = gopt.add %c2, %y : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %c3 = gopt.conv2d %x, %w : (tensor<1x4x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x3xf32>
  %r = gopt.clip %c3 {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %sum = gopt.add %a, %c : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %sum, %s, %r : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}
