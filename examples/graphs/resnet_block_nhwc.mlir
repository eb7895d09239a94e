// A ResNet basic block as TensorFlow 1.x users wrote it: NHWC activations,
// HWIO filters, batch norm decomposed into primitives, CheckNumerics and
// Identity left in. gopt's passes turn it into what an expert would write by
// hand: NCHW, batch norm folded into the convolutions, conv+bias+relu fused.
func.func @main(%x: tensor<?x16x16x32xf32> {gopt.name = "images"}) -> (tensor<?x16x16x32xf32> {gopt.name = "features"}) {
  %w1 = gopt.constant dense<0.02> : tensor<3x3x32x32xf32>
  %w2 = gopt.constant dense<-0.01> : tensor<3x3x32x32xf32>
  %gamma = gopt.constant dense<1.5> : tensor<32xf32>
  %beta = gopt.constant dense<0.1> : tensor<32xf32>
  %mean = gopt.constant dense<0.05> : tensor<32xf32>
  %var = gopt.constant dense<0.8> : tensor<32xf32>
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>

  %c1 = gopt.conv2d %x, %w1 {padding = "SAME"} : (tensor<?x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<?x16x16x32xf32>
  // Unfused inference batch norm: (x - mean) * rsqrt(var + eps) * gamma + beta.
  %v1 = gopt.add %var, %eps : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %r1 = gopt.rsqrt %v1 : (tensor<32xf32>) -> tensor<32xf32>
  %s1 = gopt.mul %r1, %gamma : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %m1 = gopt.mul %c1, %s1 : (tensor<?x16x16x32xf32>, tensor<32xf32>) -> tensor<?x16x16x32xf32>
  %ms1 = gopt.mul %mean, %s1 : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %o1 = gopt.sub %beta, %ms1 : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %b1 = gopt.add %m1, %o1 : (tensor<?x16x16x32xf32>, tensor<32xf32>) -> tensor<?x16x16x32xf32>
  %a1 = gopt.relu %b1 : (tensor<?x16x16x32xf32>) -> tensor<?x16x16x32xf32>
  %k1 = gopt.check_numerics %a1 {message = "block1/relu"} : (tensor<?x16x16x32xf32>) -> tensor<?x16x16x32xf32>

  %c2 = gopt.conv2d %k1, %w2 {padding = "SAME"} : (tensor<?x16x16x32xf32>, tensor<3x3x32x32xf32>) -> tensor<?x16x16x32xf32>
  %y2 = gopt.batch_norm %c2, %gamma, %beta, %mean, %var {epsilon = 1.0e-3 : f32} : (tensor<?x16x16x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x16x16x32xf32>
  %sum = gopt.add %y2, %x : (tensor<?x16x16x32xf32>, tensor<?x16x16x32xf32>) -> tensor<?x16x16x32xf32>
  %out = gopt.relu %sum : (tensor<?x16x16x32xf32>) -> tensor<?x16x16x32xf32>
  %id = gopt.identity %out : (tensor<?x16x16x32xf32>) -> tensor<?x16x16x32xf32>
  return %id : tensor<?x16x16x32xf32>
}
