// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of max_roi_pool (max_roi_pool_grad: each bin's gradient to its
/// maximum's element) against finite differences on the reference kernels:
/// overlapping regions (gradients add up), one past the image's edge and one
/// wholly outside (empty bins: no gradient), at scale 0.5; the first region
/// is image 0 cut into one-pixel bins, so every element of it gets a
/// gradient. x.b shifts the input, so its gradient is the op's dx.
// CHECK: grad-check
// CHECK: x.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<2x2x6x7xf32> {gopt.name = "x"}, %t: tensor<4x2x6x7xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %xb = gopt.constant dense<[[[[-0.414, -0.263, 0.301, 0.082, -0.406, -0.067, -0.021],   [-0.340, 0.235, -0.386, -0.109, 0.017, -0.069, 0.087],   [0.238, 0.456, -0.216, 0.149, 0.196, -0.207, -0.499],   [0.473, -0.202, -0.186, 0.392, 0.085, -0.029, 0.273],   [-0.470, 0.207, -0.126, -0.409, 0.161, 0.431, -0.293],   [0.130, -0.202, 0.242, 0.222, -0.281, 0.330, 0.158]],  [[0.183, 0.320, -0.071, 0.259, 0.378, -0.398, 0.350],   [-0.106, -0.020, -0.354, 0.198, -0.208, 0.371, -0.225],   [0.062, -0.100, 0.113, -0.303, -0.320, 0.247, 0.252],   [0.067, 0.421, -0.294, 0.351, -0.331, 0.464, 0.124],   [0.107, 0.471, 0.287, 0.290, -0.446, -0.131, -0.415],   [-0.306, -0.286, 0.359, -0.373, -0.203, -0.007, 0.349]]]]> : tensor<1x2x6x7xf32> loc("x.b")
  %rois = gopt.constant dense<[[0.0, 0.0, 0.0, 12.0, 10.0], [1.0, 2.0, 2.0, 9.0, 8.0], [1.0, 6.0, 4.0, 20.0, 16.0], [0.0, 30.0, 30.0, 40.0, 40.0]]> : tensor<4x5xf32>
  %xs = gopt.add %x, %xb : (tensor<2x2x6x7xf32>, tensor<1x2x6x7xf32>) -> tensor<2x2x6x7xf32>
  %y = gopt.max_roi_pool %xs, %rois {pooled_shape = array<i64: 6, 7>, spatial_scale = 0.5 : f32} : (tensor<2x2x6x7xf32>, tensor<4x5xf32>) -> tensor<4x2x6x7xf32>
  %loss = gopt.mse_loss %y, %t : (tensor<4x2x6x7xf32>, tensor<4x2x6x7xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
