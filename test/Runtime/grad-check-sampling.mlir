// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of grid_sample (grid_sample_grad: x and grid) and roi_align
/// (roi_align_grad: x) against finite differences on the reference
/// kernels: bilinear with zeros, bicubic with border and align_corners,
/// bilinear with reflection, nearest (x only); roi_align avg with a fixed
/// sampling ratio, max with output_half_pixel. x.b and grid.b shift the
/// inputs, so their gradients are the ops' dx and dgrid; positions
/// within epsilon of a pixel edge (kinks) are skipped by --grad-check.
// CHECK: grad-check
// CHECK-DAG: x.b {{.*}}: ok
// CHECK-DAG: grid.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<2x3x5x6xf32> {gopt.name = "x"}, %g: tensor<2x4x4x2xf32> {gopt.name = "g"}, %t1: tensor<2x3x4x4xf32> {gopt.name = "t1"}, %t2: tensor<3x3x2x3xf32> {gopt.name = "t2"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %x_b = gopt.constant dense<[[[[0.123, 0.242, 0.295, 0.442, 0.240, 0.422], [-0.471, -0.034, 0.443, 0.149, 0.401, -0.387], [-0.031, -0.253, 0.044, 0.074, -0.487, -0.283], [-0.221, 0.416, 0.266, -0.340, 0.297, -0.361], [0.117, -0.373, -0.498, 0.371, -0.291, -0.285]], [[0.482, 0.372, -0.211, 0.461, 0.039, 0.178], [-0.295, 0.441, 0.191, 0.467, 0.394, -0.201], [-0.139, -0.334, -0.354, -0.435, -0.199, 0.103], [-0.497, 0.178, -0.162, -0.190, 0.319, -0.019], [-0.184, -0.019, 0.205, -0.443, 0.475, -0.477]], [[0.250, 0.345, -0.482, 0.288, -0.134, 0.079], [-0.491, -0.453, -0.319, 0.455, -0.303, 0.256], [0.430, 0.442, -0.156, -0.145, 0.025, 0.276], [-0.392, 0.248, 0.297, 0.360, -0.463, 0.446], [-0.409, -0.159, 0.111, 0.418, -0.160, 0.424]]]]> : tensor<1x3x5x6xf32> loc("x.b")
  %grid_b = gopt.constant dense<[[[[0.027, -0.113], [-0.110, -0.194], [-0.253, -0.211], [0.114, 0.298]], [[-0.203, -0.271], [0.292, 0.020], [-0.056, -0.158], [0.056, 0.196]], [[-0.027, -0.047], [-0.267, 0.250], [-0.280, -0.004], [0.203, -0.222]], [[0.139, 0.270], [0.078, 0.173], [-0.236, -0.039], [-0.210, 0.207]]]]> : tensor<1x4x4x2xf32> loc("grid.b")
  %scale = gopt.constant dense<0.6> : tensor<f32>
  %rois = gopt.constant dense<[[0.5, 0.4, 4.2, 3.9], [1.2, 0.0, 5.5, 4.6], [0.0, 1.1, 2.6, 2.8]]> : tensor<3x4xf32>
  %batch = gopt.constant dense<[1, 0, 1]> : tensor<3xi64>
  %xs = gopt.add %x, %x_b : (tensor<2x3x5x6xf32>, tensor<1x3x5x6xf32>) -> tensor<2x3x5x6xf32>
  %gm = gopt.mul %g, %scale : (tensor<2x4x4x2xf32>, tensor<f32>) -> tensor<2x4x4x2xf32>
  %gs = gopt.add %gm, %grid_b : (tensor<2x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<2x4x4x2xf32>
  %s0 = gopt.grid_sample %xs, %gs {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x3x5x6xf32>, tensor<2x4x4x2xf32>) -> tensor<2x3x4x4xf32>
  %s1 = gopt.grid_sample %xs, %gs {mode = "bicubic", padding_mode = "border", align_corners = 1 : i64} : (tensor<2x3x5x6xf32>, tensor<2x4x4x2xf32>) -> tensor<2x3x4x4xf32>
  %s2 = gopt.grid_sample %xs, %gs {mode = "bilinear", padding_mode = "reflection", align_corners = 0 : i64} : (tensor<2x3x5x6xf32>, tensor<2x4x4x2xf32>) -> tensor<2x3x4x4xf32>
  %s3 = gopt.grid_sample %xs, %gs {mode = "nearest", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x3x5x6xf32>, tensor<2x4x4x2xf32>) -> tensor<2x3x4x4xf32>
  %a0 = gopt.add %s0, %s1 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %a1 = gopt.add %a0, %s2 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %a2 = gopt.add %a1, %s3 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %r0 = gopt.roi_align %xs, %rois, %batch {output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64} : (tensor<2x3x5x6xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x3x2x3xf32>
  %r1 = gopt.roi_align %xs, %rois, %batch {mode = "max", output_height = 2 : i64, output_width = 3 : i64, coordinate_transformation_mode = "output_half_pixel"} : (tensor<2x3x5x6xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x3x2x3xf32>
  %r2 = gopt.add %r0, %r1 : (tensor<3x3x2x3xf32>, tensor<3x3x2x3xf32>) -> tensor<3x3x2x3xf32>
  %l1 = gopt.mse_loss %a2, %t1 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<f32>
  %l2 = gopt.mse_loss %r2, %t2 : (tensor<3x3x2x3xf32>, tensor<3x3x2x3xf32>) -> tensor<f32>
  %loss = gopt.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
