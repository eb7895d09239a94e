// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of dft (the adjoint transform: a dft in the opposite
/// direction, scaled) and stft (the frames' adjoint dft times the window,
/// scatter-added back; the window's gradient from the gathered frames)
/// against finite differences (inputs plus named constants, whose
/// gradients are the ops' input gradients): a real input truncated to a onesided
/// dft_length, a complex input zero-padded by an inverse dft, a real input
/// at its own length, a windowed onesided stft of overlapping frames and a
/// complex stft without a window.
// CHECK: grad-check
// CHECK-DAG: sig {{.*}}: ok
// CHECK-DAG: c {{.*}}: ok
// CHECK-DAG: w {{.*}}: ok
// CHECK-DAG: cs {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%xs: tensor<1x16x1xf32> {gopt.name = "xs"}, %xc: tensor<2x6x2xf32> {gopt.name = "xc"}, %xw: tensor<6xf32> {gopt.name = "xw"}, %xcs: tensor<1x12x2xf32> {gopt.name = "xcs"}, %t1: tensor<1x5x2xf32> {gopt.name = "t1"}, %t2: tensor<2x8x2xf32> {gopt.name = "t2"}, %t3: tensor<1x16x2xf32> {gopt.name = "t3"}, %t4: tensor<1x4x4x2xf32> {gopt.name = "t4"}, %t5: tensor<1x5x4x2xf32> {gopt.name = "t5"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %sig_b = gopt.constant dense<[[[-0.829], [-0.526], [0.603], [0.164], [-0.812], [-0.134], [-0.042], [-0.681], [0.469], [-0.773], [-0.218], [0.033], [-0.139], [0.174], [0.476], [0.913]]]> : tensor<1x16x1xf32> loc("sig")
  %sig = gopt.add %xs, %sig_b : (tensor<1x16x1xf32>, tensor<1x16x1xf32>) -> tensor<1x16x1xf32>
  %c_b = gopt.constant dense<[[[-0.432, 0.297], [0.392, -0.415], [-0.997, 0.947], [-0.403, -0.372], [0.783, 0.17], [-0.057, 0.547]], [[-0.939, 0.414], [-0.252, -0.818], [0.321, 0.863], [-0.586, 0.26], [-0.404, 0.484], [0.444, -0.563]]]> : tensor<2x6x2xf32> loc("c")
  %c = gopt.add %xc, %c_b : (tensor<2x6x2xf32>, tensor<2x6x2xf32>) -> tensor<2x6x2xf32>
  %w_b = gopt.constant dense<[0.864, 0.726, 0.746, 0.856, 0.543, 0.807]> : tensor<6xf32> loc("w")
  %w = gopt.add %xw, %w_b : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %cs_b = gopt.constant dense<[[[0.757, -0.795], [0.7, -0.212], [-0.041, -0.707], [0.397, -0.416], [0.742, -0.449], [0.124, -0.201], [0.226, -0.607], [-0.639, 0.494], [0.504, 0.134], [0.842, -0.588], [0.702, -0.662], [0.929, 0.247]]]> : tensor<1x12x2xf32> loc("cs")
  %cs = gopt.add %xcs, %cs_b : (tensor<1x12x2xf32>, tensor<1x12x2xf32>) -> tensor<1x12x2xf32>
  %y1 = gopt.dft %sig {axis = 1 : i64, onesided = true, dft_length = 8 : i64} : (tensor<1x16x1xf32>) -> tensor<1x5x2xf32>
  %y2 = gopt.dft %c {axis = -2 : i64, inverse = true, dft_length = 8 : i64} : (tensor<2x6x2xf32>) -> tensor<2x8x2xf32>
  %y3 = gopt.dft %sig {axis = 1 : i64} : (tensor<1x16x1xf32>) -> tensor<1x16x2xf32>
  %y4 = gopt.stft %sig, %w {frame_step = 3 : i64} : (tensor<1x16x1xf32>, tensor<6xf32>) -> tensor<1x4x4x2xf32>
  %y5 = gopt.stft %cs {frame_step = 2 : i64, frame_length = 4 : i64, onesided = false} : (tensor<1x12x2xf32>) -> tensor<1x5x4x2xf32>
  %l1 = gopt.mse_loss %y1, %t1 : (tensor<1x5x2xf32>, tensor<1x5x2xf32>) -> tensor<f32>
  %l2 = gopt.mse_loss %y2, %t2 : (tensor<2x8x2xf32>, tensor<2x8x2xf32>) -> tensor<f32>
  %l3 = gopt.mse_loss %y3, %t3 : (tensor<1x16x2xf32>, tensor<1x16x2xf32>) -> tensor<f32>
  %l4 = gopt.mse_loss %y4, %t4 : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<f32>
  %l5 = gopt.mse_loss %y5, %t5 : (tensor<1x5x4x2xf32>, tensor<1x5x4x2xf32>) -> tensor<f32>
  %a = gopt.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %b = gopt.add %a, %l3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %e = gopt.add %b, %l4 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %loss = gopt.add %e, %l5 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
