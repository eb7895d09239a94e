// Ops that share a name, as importers and autodiff write them: a Gemm's
// matmul and bias add both named "fc", and two matmuls named "fc/grad" (a
// gradient's ops carry their forward op's name).
func.func @main(%x: tensor<?x8xf32> {gopt.name = "input"}) -> (tensor<?x4xf32> {gopt.name = "out"}, tensor<?x6xf32> {gopt.name = "second"}) {
  %w = gopt.constant dense<0.5> : tensor<8x4xf32> loc("fc.weight")
  %b = gopt.constant dense<0.25> : tensor<4xf32> loc("fc.bias")
  %w2 = gopt.constant dense<0.125> : tensor<8x6xf32> loc("fc2.weight")
  %0 = gopt.matmul %x, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32> loc("fc")
  %1 = gopt.add %0, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32> loc("fc")
  %2 = gopt.matmul %x, %w2 : (tensor<?x8xf32>, tensor<8x6xf32>) -> tensor<?x6xf32> loc("fc/grad")
  %3 = gopt.relu %2 : (tensor<?x6xf32>) -> tensor<?x6xf32> loc("fc/grad")
  %4 = gopt.matmul %3, %w2 {transpose_b = true} : (tensor<?x6xf32>, tensor<8x6xf32>) -> tensor<?x8xf32> loc("fc/grad")
  %5 = gopt.matmul %4, %w2 : (tensor<?x8xf32>, tensor<8x6xf32>) -> tensor<?x6xf32> loc("fc/grad")
  return %1, %5 : tensor<?x4xf32>, tensor<?x6xf32>
}
