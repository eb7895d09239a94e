// Ten class scores per row: the features themselves.
func.func @main(%x: tensor<?x10xf32> {gopt.name = "features"}) -> (tensor<?x10xf32> {gopt.name = "scores"}) {
  %0 = gopt.identity %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
