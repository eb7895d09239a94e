func.func @main(%x: tensor<2x3x4xf32>, %axes: tensor<1xi64>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %k = gopt.dynamic_reduce_mean %x, %axes {keep_dims = true} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %d = gopt.dynamic_reduce_sum %x, %axes : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %k, %d : tensor<?x?x?xf32>, tensor<?x?xf32>
}
