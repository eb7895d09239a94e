// RUN: gopt-run %s --grad-check --batch 2 --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of col2im (x's gradient: dy cut into the same blocks, a gather
/// of dy with the blocks' index map, 0 for elements in the padding) against
/// finite differences: a 2-D image with strides 1 and 2 and uneven padding
/// (a dynamic batch), and a 1-D image with dilation 2 whose first and last
/// blocks reach into the padding.
// CHECK: grad-check
// CHECK-DAG: x2.b {{.*}}: ok
// CHECK-DAG: x1.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x2: tensor<?x12x12xf32> {gopt.name = "x2"}, %x1: tensor<1x6x5xf32> {gopt.name = "x1"}, %t2: tensor<?x3x4x5xf32> {gopt.name = "t2"}, %t1: tensor<1x2x7xf32> {gopt.name = "t1"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %x2_b = gopt.constant dense<[[[0.759, -0.872, 0.358, 0.74, -0.545, 0.791, 0.744, -0.963, 0.415, -0.998, 0.007, -0.127], [-0.593, -0.35, 0.612, -0.367, -0.702, 0.397, -0.103, 0.598, -0.529, -0.36, 0.6, 0.014], [0.013, -0.528, -0.971, 0.866, -0.828, 0.69, -0.264, 0.902, -0.201, 0.873, 0.112, -0.52], [0.483, 0.349, 0.368, -0.072, -0.556, 0.282, -0.786, 0.384, 0.271, -0.247, 0.597, -0.612], [-0.219, 0.596, -0.239, 0.427, 0.225, 0.882, 0.983, 0.447, 0.618, -0.694, 0.426, 0.695], [-0.198, 0.107, -0.041, 0.917, -0.365, -0.196, -0.998, -0.16, 0.263, 0.87, 0.847, -0.345], [0.978, -0.625, 0.647, -0.685, -0.19, -0.853, 0.716, 0.658, -0.72, 0.054, -0.484, -0.016], [0.106, -0.787, 0.729, -0.443, -0.106, -0.885, -0.995, -0.61, -0.317, 0.856, 0.779, -0.039], [-0.09, 0.334, 0.718, -0.325, 0.587, -0.202, 0.188, 0.475, 0.003, 0.382, 0.395, -0.989], [-0.922, -0.702, -0.573, -0.594, -0.902, -0.566, 0.202, 0.772, -0.301, -0.267, -0.167, 0.361], [0.571, 0.882, -0.249, 0.414, -0.317, 0.648, -0.539, 0.742, 0.01, 0.451, 0.07, -0.368], [-0.011, -0.899, -0.914, 0.06, -0.046, 0.666, -0.96, 0.114, -0.019, 0.196, 0.459, 0.049]]]> : tensor<1x12x12xf32> loc("x2.b")
  %x1_b = gopt.constant dense<[[[0.126, -0.016, 0.23, -0.504, 0.105], [0.345, -0.618, 0.981, 0.493, 0.911], [-0.412, -0.113, -0.477, -0.907, -0.967], [-0.507, 0.723, -0.673, 0.379, -0.501], [-0.869, -0.615, 0.356, 0.003, 0.098], [-0.094, -0.451, -0.023, 0.845, -0.597]]]> : tensor<1x6x5xf32> loc("x1.b")
  %a2 = gopt.add %x2, %x2_b : (tensor<?x12x12xf32>, tensor<1x12x12xf32>) -> tensor<?x12x12xf32>
  %a1 = gopt.add %x1, %x1_b : (tensor<1x6x5xf32>, tensor<1x6x5xf32>) -> tensor<1x6x5xf32>
  %y2 = gopt.col2im %a2 {image_shape = array<i64: 4, 5>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 1>} : (tensor<?x12x12xf32>) -> tensor<?x3x4x5xf32>
  %y1 = gopt.col2im %a1 {image_shape = array<i64: 7>, block_shape = array<i64: 3>, strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<1x6x5xf32>) -> tensor<1x2x7xf32>
  %l2 = gopt.mse_loss %y2, %t2 : (tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>) -> tensor<f32>
  %l1 = gopt.mse_loss %y1, %t1 : (tensor<1x2x7xf32>, tensor<1x2x7xf32>) -> tensor<f32>
  %loss = gopt.add %l2, %l1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
