// The graph of run-mlir.mlir with its weights scaled by 2: --compare must
// report the difference.
func.func @main(%x: tensor<?x8xf32> {gopt.name = "features"}) -> (tensor<?x2xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<[[1.0, -1.0], [0.5, 1.5], [-2.0, 2.0], [0.2, 0.4], [0.6, -0.6], [0.0, 2.0], [2.0, 0.0], [-1.0, 1.0]]> : tensor<8x2xf32>
  %0 = gopt.matmul %x, %w : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32>
  %1 = gopt.relu %0 : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}
