// A random stream that no ONNX float seed gives (export-onnx-breadth2.test).
func.func @main(%u: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = gopt.random_uniform_like %u {seed = 7 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
