func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<4xi32>, tensor<3xf32>) {
  %g = gopt.gelu %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %t = gopt.gelu %x {approximate = "tanh"} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %r = gopt.range {start = 7.0, limit = -1.0, delta = -2.0} : tensor<4xi32>
  %f = gopt.range {start = 0.5, limit = 2.0, delta = 0.5} : tensor<3xf32>
  return %g, %t, %r, %f : tensor<2x5xf32>, tensor<2x5xf32>, tensor<4xi32>, tensor<3xf32>
}
