

  %0 = gopt.reshape %c {shape = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2x2xf32>
// CHECK-LABEL: func @reshape_constant
func.func @reshape_constant() -> tensor<2x2xf32> {
  // CHECK: %[[C:.*]] = gopt.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  // CHECK-NOT: gopt.reshape
  // CHECK: return %[[C]]
  %c = gopt.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 =  gopt.reshape %c {shape = array<i64: 2, 2>} : (tensor<4xf32>) -> ,tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

