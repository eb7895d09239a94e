%0 = arith.addf %c, %c : tensor<4xf32>
func.func @f() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %1 = arith.addf %c, %c : ,tensor<4xf32>
  return %1 : tensor<4xf32>
}
