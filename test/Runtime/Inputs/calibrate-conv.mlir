// conv2d, relu, max_pool, a residual add, global_avg_pool, avg_pool and
// concat in NCHW: the layouts and fusions of the cpu backend (oneDNN) for
// gopt-run --calibrate (calibrate-conv.test).
func.func @main(%x: tensor<?x2x6x6xf32> {gopt.name = "image"}) -> (tensor<?x8xf32> {gopt.name = "features"}) {
  %w1 = gopt.constant dense<[[[[-0.26, 0.04, -0.13], [0.10, 0.13, -0.43], [-0.49, 0.34, -0.24]], [[-0.27, 0.50, -0.03], [0.34, -0.02, 0.14], [-0.35, 0.13, 0.37]]], [[[0.02, 0.24, 0.17], [-0.44, 0.26, 0.09], [-0.20, -0.47, 0.37]], [[-0.03, 0.22, 0.38], [0.21, 0.42, -0.11], [0.30, -0.06, 0.44]]], [[[0.38, -0.40, -0.36], [-0.28, 0.47, -0.06], [0.13, -0.20, 0.01]], [[-0.11, -0.15, 0.09], [0.08, 0.40, 0.18], [0.43, 0.36, 0.49]]], [[[0.17, -0.34, 0.36], [0.46, 0.40, 0.07], [0.21, -0.29, 0.33]], [[0.07, -0.22, -0.44], [0.35, 0.49, -0.41], [0.30, -0.09, -0.35]]]]> : tensor<4x2x3x3xf32> loc("conv.weight")
  %w2 = gopt.constant dense<[[[[-0.21]], [[0.27]], [[0.37]], [[-0.46]]], [[[0.11]], [[-0.46]], [[0.22]], [[-0.17]]], [[[0.38]], [[0.48]], [[0.01]], [[0.50]]], [[[-0.19]], [[-0.42]], [[0.10]], [[-0.47]]]]> : tensor<4x4x1x1xf32> loc("conv2.weight")
  %c = gopt.conv2d %x, %w1 {data_format = "NCHW", filter_format = "OIHW", padding = "SAME"} : (tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32> loc("conv")
  %r = gopt.relu %c : (tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32> loc("conv/relu")
  %m = gopt.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NCHW"} : (tensor<?x4x6x6xf32>) -> tensor<?x4x3x3xf32> loc("pool")
  %c2 = gopt.conv2d %m, %w2 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x3x3xf32> loc("conv2")
  %s = gopt.add %c2, %m : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32> loc("residual")
  %g = gopt.global_avg_pool %s {data_format = "NCHW"} : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32> loc("gap")
  %a = gopt.avg_pool %s {kernel = array<i64: 3, 3>, strides = array<i64: 3, 3>, data_format = "NCHW"} : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32> loc("avg")
  %cat = gopt.concat %g, %a {axis = 1 : i64} : (tensor<?x4x1x1xf32>, tensor<?x4x1x1xf32>) -> tensor<?x8x1x1xf32> loc("cat")
  %f = gopt.flatten %cat : (tensor<?x8x1x1xf32>) -> tensor<?x8xf32>
  return %f : tensor<?x8xf32>
}
