func.func @main(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<?xf32> {
  %y = gopt.dynamic_reduce_max %x, %axes : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
