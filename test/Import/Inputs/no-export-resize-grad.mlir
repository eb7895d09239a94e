// resize's gradient, a training op (export-onnx-breadth2.test).
func.func @main(%x: tensor<1x8x6x6xf32>, %dy: tensor<1x8x12x12xf32>) -> tensor<1x8x6x6xf32> {
  %dx = gopt.resize_grad %x, %dy {scales = array<f32: 2.0, 2.0>, mode = "linear", data_format = "NCHW"} : (tensor<1x8x6x6xf32>, tensor<1x8x12x12xf32>) -> tensor<1x8x6x6xf32>
  return %dx : tensor<1x8x6x6xf32>
}
