// A conv + inference-form batch norm + relu classifier, as an exporter
// writes it for inference: gopt-run --train and --grad-check put the batch
// norm in training form (gopt-train-batch-norm).
func.func @main(%x: tensor<?x2x4x4xf32> {gopt.name = "input"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<[[[[0.3]], [[-0.2]]], [[[0.1]], [[0.4]]], [[[-0.3]], [[0.2]]]]> : tensor<3x2x1x1xf32> loc("conv.weight")
  %scale = gopt.constant dense<[1.2, 0.8, 1.5]> : tensor<3xf32> loc("bn.weight")
  %offset = gopt.constant dense<[0.1, -0.2, 0.05]> : tensor<3xf32> loc("bn.bias")
  %mean = gopt.constant dense<[0.0, 0.1, -0.1]> : tensor<3xf32> loc("bn.running_mean")
  %var = gopt.constant dense<[1.0, 0.5, 2.0]> : tensor<3xf32> loc("bn.running_var")
  %fc = gopt.constant dense<[[0.5, -0.4, 0.3], [0.2, 0.6, -0.5], [-0.3, 0.1, 0.4]]> : tensor<3x3xf32> loc("fc.weight")
  %0 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<?x3x4x4xf32>
  %1 = gopt.batch_norm %0, %scale, %offset, %mean, %var {data_format = "NCHW", epsilon = 1.0e-3 : f32} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  %2 = gopt.relu %1 : (tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32>
  %3 = gopt.global_avg_pool %2 {data_format = "NCHW"} : (tensor<?x3x4x4xf32>) -> tensor<?x3x1x1xf32>
  %4 = gopt.flatten %3 : (tensor<?x3x1x1xf32>) -> tensor<?x3xf32>
  %5 = gopt.matmul %4, %fc : (tensor<?x3xf32>, tensor<3x3xf32>) -> tensor<?x3xf32>
  return %5 : tensor<?x3xf32>
}
