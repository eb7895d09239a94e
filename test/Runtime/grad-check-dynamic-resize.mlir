// RUN: gopt-run %s --grad-check --batch 2 --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of dynamic_resize with run-time scales, sizes and roi
/// (dynamic_resize_grad, which runs as resize_grad with the attributes the
/// forward runs as): each value is a constant plus zeros computed from x's
/// run-time shape, so nothing folds to the static resize (gopt.fixed keeps
/// the float ones from being lifted as parameters). Linear
/// (half_pixel) by scales 2 x 1.5, cubic (asymmetric) to sizes,
/// nearest (floor) downscaling by scales, and linear tf_crop_and_resize
/// with a roi and an extrapolation value, against finite differences of a
/// weighted sum of squares (dynamic_reduce_sum). x.b shifts the input, so its gradient is dx.
// CHECK: grad-check
// CHECK: x.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x2x4x5xf32> {gopt.name = "x"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %xb = gopt.constant dense<[[[[-0.371, -0.001,  0.101, -0.471, -0.352],   [ 0.428, -0.430, -0.370,  0.448,  0.122],   [-0.131,  0.011,  0.163, -0.225, -0.362],   [ 0.288,  0.170,  0.012,  0.317,  0.049]],  [[ 0.481, -0.295,  0.054, -0.016, -0.147],   [ 0.092, -0.265,  0.302,  0.367, -0.371],   [-0.033, -0.223, -0.417,  0.396, -0.070],   [-0.352,  0.173, -0.298,  0.401, -0.283]]]]> : tensor<1x2x4x5xf32> loc("x.b")
  %h = gopt.add %x, %xb : (tensor<?x2x4x5xf32>, tensor<1x2x4x5xf32>) -> tensor<?x2x4x5xf32>
  %shape = gopt.shape %x : (tensor<?x2x4x5xf32>) -> tensor<4xi64>
  %n = gopt.slice %shape {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<4xi64>) -> tensor<1xi64>
  %zi = gopt.sub %n, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %zf = gopt.cast %zi : (tensor<1xi64>) -> tensor<1xf32>
  %noroi = gopt.constant dense<> : tensor<0xf32>
  %noscales = gopt.constant dense<> : tensor<0xf32>
  %nosizes = gopt.constant dense<> : tensor<0xi64>
  %keep = gopt.constant dense<[1, 1, 0, 0]> : tensor<4xi64>
  %kept = gopt.mul %shape, %keep : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %s1c = gopt.constant {gopt.fixed} dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>
  %s1 = gopt.add %s1c, %zf : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %z2c = gopt.constant dense<[0, 0, 7, 3]> : tensor<4xi64>
  %z2 = gopt.add %kept, %z2c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %s3c = gopt.constant {gopt.fixed} dense<[1.0, 1.0, 0.5, 0.6]> : tensor<4xf32>
  %s3 = gopt.add %s3c, %zf : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %r4c = gopt.constant {gopt.fixed} dense<[0.0, 0.0, 0.1, 0.25, 1.0, 1.0, 0.8, 1.2]> : tensor<8xf32>
  %r4 = gopt.add %r4c, %zf : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  %z4c = gopt.constant dense<[0, 0, 5, 6]> : tensor<4xi64>
  %z4 = gopt.add %kept, %z4c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %axc = gopt.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %axes = gopt.add %axc, %zi : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y1 = gopt.dynamic_resize %h, %noroi, %s1, %nosizes {mode = "linear", coordinate_transformation_mode = "half_pixel", data_format = "NCHW"} : (tensor<?x2x4x5xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<?x2x?x?xf32>
  %y2 = gopt.dynamic_resize %h, %noroi, %noscales, %z2 {mode = "cubic", coordinate_transformation_mode = "asymmetric", data_format = "NCHW"} : (tensor<?x2x4x5xf32>, tensor<0xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<?x2x?x?xf32>
  %y3 = gopt.dynamic_resize %h, %noroi, %s3, %nosizes {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", data_format = "NCHW"} : (tensor<?x2x4x5xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<?x2x?x?xf32>
  %y4 = gopt.dynamic_resize %h, %r4, %noscales, %z4 {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 0.5 : f32, data_format = "NCHW"} : (tensor<?x2x4x5xf32>, tensor<8xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<?x2x?x?xf32>
  %q1 = gopt.mul %y1, %y1 : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %l1 = gopt.dynamic_reduce_sum %q1, %axes : (tensor<?x2x?x?xf32>, tensor<4xi64>) -> tensor<f32>
  %q2 = gopt.mul %y2, %y2 : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %l2 = gopt.dynamic_reduce_sum %q2, %axes : (tensor<?x2x?x?xf32>, tensor<4xi64>) -> tensor<f32>
  %q3 = gopt.mul %y3, %y3 : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %l3 = gopt.dynamic_reduce_sum %q3, %axes : (tensor<?x2x?x?xf32>, tensor<4xi64>) -> tensor<f32>
  %q4 = gopt.mul %y4, %y4 : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %l4 = gopt.dynamic_reduce_sum %q4, %axes : (tensor<?x2x?x?xf32>, tensor<4xi64>) -> tensor<f32>
  %w2 = gopt.constant dense<0.7> : tensor<f32>
  %w3 = gopt.constant dense<1.3> : tensor<f32>
  %m2 = gopt.mul %l2, %w2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %m3 = gopt.mul %l3, %w3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a1 = gopt.add %l1, %m2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a2 = gopt.add %a1, %m3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %loss = gopt.add %a2, %l4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
