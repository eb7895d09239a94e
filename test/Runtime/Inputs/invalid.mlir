func.func @main(%x: tensor<?x8xf32>) -> tensor<?x2xf32> {
  %w = gopt.constant dense<0.5> : tensor<4x2xf32>
  %0 = gopt.matmul %x, %w : (tensor<?x8xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
