// RUN: gopt-run %s --grad-check --batch 2 | FileCheck %s

/// Autodiff through average pooling against finite differences: NHWC with
/// explicit pads (padding not counted), NCHW with SAME padding counted and
/// ceil_mode (the ceil area never counted), then a dense layer and softmax
/// cross-entropy.
// CHECK: grad-check
// CHECK-DAG: conv.w {{.*}}: ok
// CHECK-DAG: conv.b {{.*}}: ok
// CHECK-DAG: fc.w {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x6x6x2xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<[[[[0.3, -0.2, 0.1], [0.2, 0.4, -0.1]]]]> : tensor<1x1x2x3xf32> loc("conv.w")
  %b = gopt.constant dense<[0.1, -0.05, 0.2]> : tensor<3xf32> loc("conv.b")
  %wf = gopt.constant dense<[[0.3, -0.2, 0.1], [0.2, 0.1, -0.3], [-0.1, 0.3, 0.2], [0.1, 0.2, 0.3], [-0.2, 0.1, 0.1], [0.3, 0.1, -0.2], [0.2, -0.3, 0.1], [0.1, 0.1, 0.2], [-0.3, 0.2, 0.1], [0.2, 0.2, -0.1], [0.1, -0.1, 0.3], [0.3, 0.2, 0.1]]> : tensor<12x3xf32> loc("fc.w")
  %0 = gopt.conv2d %x, %w, %b : (tensor<?x6x6x2xf32>, tensor<1x1x2x3xf32>, tensor<3xf32>) -> tensor<?x6x6x3xf32>
  %1 = gopt.tanh %0 : (tensor<?x6x6x3xf32>) -> tensor<?x6x6x3xf32>
  %2 = gopt.avg_pool %1 {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x6x6x3xf32>) -> tensor<?x6x6x3xf32>
  %3 = gopt.transpose %2 {perm = array<i64: 0, 3, 1, 2>} : (tensor<?x6x6x3xf32>) -> tensor<?x3x6x6xf32>
  %4 = gopt.mul %3, %3 : (tensor<?x3x6x6xf32>, tensor<?x3x6x6xf32>) -> tensor<?x3x6x6xf32>
  %5 = gopt.avg_pool %4 {kernel = array<i64: 3, 3>, strides = array<i64: 4, 4>, padding = "SAME", ceil_mode = true, count_include_pad = true, data_format = "NCHW"} : (tensor<?x3x6x6xf32>) -> tensor<?x3x2x2xf32>
  %6 = gopt.flatten %5 : (tensor<?x3x2x2xf32>) -> tensor<?x12xf32>
  %7 = gopt.matmul %6, %wf : (tensor<?x12xf32>, tensor<12x3xf32>) -> tensor<?x3xf32>
  return %7 : tensor<?x3xf32>
}
