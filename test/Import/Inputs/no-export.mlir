func.func @main(%x: tensor<2x4xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %y, %s:4 = gopt.batch_norm %x, %c, %c, %c, %c {training = true, cross_replica = true} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4xf32>
}
