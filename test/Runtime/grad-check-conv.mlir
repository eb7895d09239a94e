// RUN: gopt-run %s --grad-check --batch 2 | FileCheck %s

/// Autodiff through a strided SAME conv with a fused relu (NHWC/HWIO), a
/// padded max pool, a dilated grouped NCHW conv, global average pooling,
/// flatten, a dense layer and softmax cross-entropy (labels row % 2).
// CHECK: grad-check
// CHECK-DAG: conv1.w {{.*}}: ok
// CHECK-DAG: conv1.b {{.*}}: ok
// CHECK-DAG: conv2.w {{.*}}: ok
// CHECK-DAG: fc.w {{.*}}: ok
// CHECK-DAG: fc.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x9x9x2xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<[[[[0.2, -0.1, 0.3, 0.1], [0.1, 0.2, -0.2, 0.05]], [[-0.3, 0.1, 0.2, 0.1], [0.2, -0.1, 0.1, 0.3]], [[0.1, 0.3, -0.1, 0.2], [-0.2, 0.1, 0.2, -0.1]]],
                             [[[0.3, 0.1, -0.2, 0.1], [0.1, -0.3, 0.1, 0.2]], [[0.2, 0.2, 0.1, -0.1], [-0.1, 0.2, 0.3, 0.1]], [[-0.2, 0.1, 0.1, 0.3], [0.2, 0.1, -0.1, 0.1]]],
                             [[[0.1, -0.2, 0.2, 0.1], [0.3, 0.1, 0.1, -0.2]], [[0.1, 0.1, -0.3, 0.2], [0.2, -0.2, 0.1, 0.1]], [[0.2, 0.1, 0.1, -0.1], [-0.1, 0.3, 0.2, 0.1]]]]> : tensor<3x3x2x4xf32> loc("conv1.w")
  %b1 = gopt.constant dense<[0.1, -0.05, 0.2, 0.0]> : tensor<4xf32> loc("conv1.b")
  %w2 = gopt.constant dense<[[[[0.3, -0.2], [0.1, 0.4]], [[-0.1, 0.2], [0.3, 0.1]]],
                             [[[0.2, 0.1], [-0.3, 0.2]], [[0.1, -0.1], [0.2, 0.3]]],
                             [[[0.1, 0.3], [0.2, -0.1]], [[0.4, 0.1], [-0.2, 0.1]]],
                             [[[-0.1, 0.2], [0.3, 0.1]], [[0.2, 0.2], [0.1, -0.3]]]]> : tensor<4x2x2x2xf32> loc("conv2.w")
  %wf = gopt.constant dense<[[0.3, -0.2, 0.1, 0.4], [0.2, 0.1, -0.3, 0.2], [-0.1, 0.3, 0.2, 0.1]]> : tensor<3x4xf32> loc("fc.w")
  %bf = gopt.constant dense<[0.05, -0.1, 0.2]> : tensor<3xf32> loc("fc.b")
  %0 = gopt.conv2d %x, %w1, %b1 {padding = "SAME", strides = array<i64: 2, 2>, activation = "relu"} : (tensor<?x9x9x2xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>) -> tensor<?x5x5x4xf32>
  %1 = gopt.max_pool %0 {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 0, 1, 0>} : (tensor<?x5x5x4xf32>) -> tensor<?x5x5x4xf32>
  %2 = gopt.transpose %1 {perm = array<i64: 0, 3, 1, 2>} : (tensor<?x5x5x4xf32>) -> tensor<?x4x5x5xf32>
  %3 = gopt.conv2d %2, %w2 {data_format = "NCHW", filter_format = "OIHW", groups = 2, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x4x5x5xf32>, tensor<4x2x2x2xf32>) -> tensor<?x4x5x5xf32>
  %4 = gopt.tanh %3 : (tensor<?x4x5x5xf32>) -> tensor<?x4x5x5xf32>
  %5 = gopt.global_avg_pool %4 {data_format = "NCHW"} : (tensor<?x4x5x5xf32>) -> tensor<?x4x1x1xf32>
  %6 = gopt.flatten %5 : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %7 = gopt.matmul %6, %wf {transpose_b = true} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  %8 = gopt.bias_add %7, %bf : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %8 : tensor<?x3xf32>
}
