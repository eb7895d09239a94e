// scores.mlir with every score negated: the top class of one is the bottom
// class of the other.
func.func @main(%x: tensor<?x10xf32> {gopt.name = "features"}) -> (tensor<?x10xf32> {gopt.name = "scores"}) {
  %0 = gopt.neg %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
