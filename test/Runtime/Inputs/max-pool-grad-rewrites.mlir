// The relu and bias gradients behind a max pool, as autodiff writes them
// (test/Runtime/max-pool-grad-rewrites.test): a 2x2 NHWC pool and an
// overlapping 3x3 stride-2 padded NCHW one. The pooled values are results
// too, as the forward pass of a training step reads them.
func.func @main(%y: tensor<4x12x12x16xf32>, %g: tensor<4x6x6x16xf32>,
                %y2: tensor<2x8x15x15xf32>, %g2: tensor<2x8x8x8xf32>)
    -> (tensor<4x12x12x16xf32>, tensor<16xf32>, tensor<2x8x15x15xf32>, tensor<8xf32>,
        tensor<4x6x6x16xf32>, tensor<2x8x8x8xf32>) {
  %p = gopt.max_pool %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NHWC"} : (tensor<4x12x12x16xf32>) -> tensor<4x6x6x16xf32>
  %d = gopt.max_pool_grad %y, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_format = "NHWC"} : (tensor<4x12x12x16xf32>, tensor<4x6x6x16xf32>) -> tensor<4x12x12x16xf32>
  %dx = gopt.relu_grad %d, %y : (tensor<4x12x12x16xf32>, tensor<4x12x12x16xf32>) -> tensor<4x12x12x16xf32>
  %b = gopt.reduce_sum %dx {axes = array<i64: 0, 1, 2>} : (tensor<4x12x12x16xf32>) -> tensor<16xf32>
  %p2 = gopt.max_pool %y2 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"} : (tensor<2x8x15x15xf32>) -> tensor<2x8x8x8xf32>
  %d2 = gopt.max_pool_grad %y2, %g2 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"} : (tensor<2x8x15x15xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x15x15xf32>
  %dx2 = gopt.relu_grad %d2, %y2 : (tensor<2x8x15x15xf32>, tensor<2x8x15x15xf32>) -> tensor<2x8x15x15xf32>
  %b2 = gopt.reduce_sum %dx2 {axes = array<i64: 0, 2, 3>} : (tensor<2x8x15x15xf32>) -> tensor<8xf32>
  return %dx, %b, %dx2, %b2, %p, %p2 : tensor<4x12x12x16xf32>, tensor<16xf32>, tensor<2x8x15x15xf32>, tensor<8xf32>,
      tensor<4x6x6x16xf32>, tensor<2x8x8x8xf32>
}
