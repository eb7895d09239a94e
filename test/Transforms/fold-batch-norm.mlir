// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fold-batch-norm | FileCheck %s

/// BN after an NHWC conv with an HWIO filter: s = scale / sqrt(var + eps)
/// = [2, 0.5] scales output channels (the last filter dim) and the bias is
/// (0 - mean) * s + offset = [-1, 1].
// CHECK-LABEL: func @conv_hwio
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x1xf32>)
func.func @conv_hwio(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK-DAG: %[[W:.*]] = gopt.constant dense<{{\[\[\[}}[2.000000e+00, 5.000000e-01]]]]> : tensor<1x1x1x2xf32>
  // CHECK-DAG: %[[B:.*]] = gopt.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
  // CHECK: %[[Y:.*]] = gopt.conv2d %[[X]], %[[W]], %[[B]] :
  // CHECK-NOT: gopt.batch_norm
  // CHECK: return %[[Y]]
  %w = gopt.constant dense<1.0> : tensor<1x1x1x2xf32>
  %scale = gopt.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %offset = gopt.constant dense<[0.0, 1.5]> : tensor<2xf32>
  %mean = gopt.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = gopt.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = gopt.conv2d %x, %w : (tensor<1x4x4x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %y = gopt.batch_norm %c, %scale, %offset, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

/// NCHW conv with an OIHW filter and its own bias: output channels are the
/// first filter dim; bias (b - mean) * s + offset = ([1,1] - [0.5,1]) * [2,0.5] + [0,1.5].
// CHECK-LABEL: func @conv_oihw_with_bias
func.func @conv_oihw_with_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK-DAG: gopt.constant dense<{{\[\[\[}}[2.000000e+00]]], {{\[\[\[}}5.000000e-01]]]]> : tensor<2x1x1x1xf32>
  // CHECK-DAG: gopt.constant dense<[1.000000e+00, 1.500000e+00]> : tensor<2xf32>
  // CHECK: gopt.conv2d {{.*}}data_format = "NCHW", filter_format = "OIHW"
  // CHECK-NOT: gopt.batch_norm
  %w = gopt.constant dense<1.0> : tensor<2x1x1x1xf32>
  %b = gopt.constant dense<1.0> : tensor<2xf32>
  %scale = gopt.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %offset = gopt.constant dense<[0.0, 1.5]> : tensor<2xf32>
  %mean = gopt.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = gopt.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = gopt.batch_norm %c, %scale, %offset, %mean, %var {epsilon = 0.0 : f32, data_format = "NCHW"} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

/// BN on [N, C] after a matmul: the weight columns are scaled and a
/// bias_add carries the shift.
// CHECK-LABEL: func @matmul
func.func @matmul(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // CHECK-DAG: %[[W:.*]] = gopt.constant dense<{{\[}}[2.000000e+00, 5.000000e-01], [2.000000e+00, 5.000000e-01]]> : tensor<2x2xf32>
  // CHECK: %[[M:.*]] = gopt.matmul %{{.*}}, %[[W]]
  // CHECK: gopt.bias_add %[[M]]
  // CHECK-NOT: gopt.batch_norm
  %w = gopt.constant dense<1.0> : tensor<2x2xf32>
  %scale = gopt.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %offset = gopt.constant dense<[0.0, 1.5]> : tensor<2xf32>
  %mean = gopt.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %var = gopt.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %m = gopt.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %y = gopt.batch_norm %m, %scale, %offset, %mean, %var {epsilon = 0.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

/// A conv whose result is also used elsewhere keeps its weights; so does a
/// BN with non-constant parameters and a training BN.
// CHECK-LABEL: func @not_foldable
func.func @not_foldable(%x: tensor<1x4x4x1xf32>, %mean: tensor<2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  // CHECK-COUNT-3: gopt.batch_norm
  %w = gopt.constant dense<1.0> : tensor<1x1x1x2xf32>
  %p = gopt.constant dense<1.0> : tensor<2xf32>
  %c = gopt.conv2d %x, %w : (tensor<1x4x4x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %y = gopt.batch_norm %c, %p, %p, %p, %p : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %c2 = gopt.conv2d %x, %w : (tensor<1x4x4x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %y2 = gopt.batch_norm %c2, %p, %p, %mean, %p : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %c3 = gopt.conv2d %x, %w : (tensor<1x4x4x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %y3:5 = gopt.batch_norm %c3, %p, %p, %p, %p {training = true} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %y, %y2, %y3#0, %c : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}
