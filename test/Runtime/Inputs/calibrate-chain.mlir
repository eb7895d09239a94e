// x -> relu -> + 1 -> matmul by 2*I -> softmax, for gopt-run --calibrate
// (calibrate.test): every calibrated range follows from the input's by hand.
// The add and the matmul have no location name, so their plan tensors are
// named <kind>_<index of the op in the function body>.
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x4xf32> {gopt.name = "y"}) {
  %one = gopt.constant dense<1.0> : tensor<4xf32>
  %w = gopt.constant dense<[[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0]]> : tensor<4x4xf32>
  %0 = gopt.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("relu")
  %1 = gopt.add %0, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %2 = gopt.matmul %1, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %3 = gopt.softmax %2 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}
