// A linear classifier of 1x4x4 images into 3 classes, for the gopt-run
// --train tests (data: tiny-*-idx*-ubyte.gz, tiny-inputs.npy).
func.func @main(%x: tensor<?x1x4x4xf32> {gopt.name = "input"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<0.01> : tensor<3x16xf32> loc("fc.weight")
  %b = gopt.constant dense<0.0> : tensor<3xf32> loc("fc.bias")
  %0 = gopt.flatten %x : (tensor<?x1x4x4xf32>) -> tensor<?x16xf32>
  %1 = gopt.matmul %0, %w {transpose_b = true} : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  %2 = gopt.add %1, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
