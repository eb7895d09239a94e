// An NHWC conv / batch norm / max_pool / residual / classifier, as a
// TensorFlow user writes it: the training step of it (lift-params,
// train-batch-norm, add-loss, autodiff) has conv2d_backprop_input/filter,
// batch_norm_grad and max_pool_grad in NHWC for gopt-convert-layout
// (test/Transforms/convert-layout-training.test).
func.func @main(%x: tensor<?x6x6x2xf32> {gopt.name = "input"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<[[[[-0.4144, -0.2632, 0.3013, 0.08216],   [-0.4059, -0.06687, -0.02095, -0.3403]],  [[0.2346, -0.3863, -0.1088, 0.01674],   [-0.06937, 0.0868, 0.2378, 0.4563]],  [[-0.2158, 0.1485, 0.1962, -0.2073],   [-0.4985, 0.4735, -0.2016, -0.186]]], [[[0.3917, 0.08516, -0.02869, 0.2733],   [-0.4697, 0.207, -0.1258, -0.4091]],  [[0.1605, 0.4315, -0.2928, 0.1301],   [-0.2018, 0.2418, 0.2222, -0.2813]],  [[0.3299, 0.1577, 0.1828, 0.3201],   [-0.07143, 0.2587, 0.3785, -0.3977]]], [[[0.3498, -0.1061, -0.02032, -0.3537],   [0.1984, -0.208, 0.3711, -0.2246]],  [[0.06181, -0.1003, 0.1129, -0.3034],   [-0.3197, 0.2469, 0.2522, 0.06698]],  [[0.4211, -0.2942, 0.3509, -0.331],   [0.4644, 0.1237, 0.1069, 0.4706]]]]> : tensor<3x3x2x4xf32> loc("conv1.weight")
  %c1 = gopt.conv2d %x, %w1 {padding = "SAME"} : (tensor<?x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<?x6x6x4xf32> loc("conv1")
  %g = gopt.constant dense<[1.0, 0.9, 1.1, 1.2]> : tensor<4xf32> loc("bn.scale")
  %b = gopt.constant dense<[0.0, 0.1, -0.1, 0.2]> : tensor<4xf32> loc("bn.offset")
  %mu = gopt.constant dense<0.0> : tensor<4xf32> loc("bn.mean")
  %var = gopt.constant dense<1.0> : tensor<4xf32> loc("bn.var")
  %n = gopt.batch_norm %c1, %g, %b, %mu, %var {epsilon = 1.0e-05 : f32} : (tensor<?x6x6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x6x6x4xf32> loc("bn")
  %r = gopt.relu %n : (tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32> loc("relu")
  %p = gopt.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x6x6x4xf32>) -> tensor<?x3x3x4xf32> loc("pool")
  %w2 = gopt.constant dense<[[[[0.287, 0.2899, -0.4459, -0.1307],   [-0.4151, -0.3065, -0.2861, 0.3586],   [-0.3732, -0.2032, -0.007153, 0.3495],   [0.4652, 0.2081, -0.2863, 0.04498]]]]> : tensor<1x1x4x4xf32> loc("conv2.weight")
  %c2 = gopt.conv2d %p, %w2 : (tensor<?x3x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<?x3x3x4xf32> loc("conv2")
  %s = gopt.add %c2, %p : (tensor<?x3x3x4xf32>, tensor<?x3x3x4xf32>) -> tensor<?x3x3x4xf32> loc("residual")
  %a = gopt.global_avg_pool %s : (tensor<?x3x3x4xf32>) -> tensor<?x1x1x4xf32> loc("gap")
  %f = gopt.flatten %a : (tensor<?x1x1x4xf32>) -> tensor<?x4xf32> loc("flatten")
  %m = gopt.constant dense<[[0.206, -0.4481, 0.1799], [-0.1317, 0.0897, 0.1695], [0.1691, 0.02305, 0.05474], [-0.3019, -0.004813, -0.3746]]> : tensor<4x3xf32> loc("fc.weight")
  %l = gopt.matmul %f, %m : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32> loc("fc")
  return %l : tensor<?x3xf32>
}
