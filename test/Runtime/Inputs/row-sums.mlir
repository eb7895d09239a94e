// One score per row ([N], not [N, C] class scores): nothing for --labels.
func.func @main(%x: tensor<?x10xf32> {gopt.name = "features"}) -> (tensor<?xf32> {gopt.name = "sums"}) {
  %0 = gopt.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
