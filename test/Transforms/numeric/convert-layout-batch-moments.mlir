// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -verify-each --gopt-convert-layout=layout=NCHW -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --batch 3 --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME

/// A TF 1.x training block in NHWC whose batch norm is computed from the
/// batch moments (tf.nn.moments + tf.nn.batch_normalization: Mean,
/// StopGradient, SquaredDifference, Mean, Add, Rsqrt, Mul, Mul, Mul, Sub,
/// Add), as GraphDefs import it. gopt-convert-layout on its own, without
/// gopt-optimize's batch-norm fusion first, used to ping-pong the per-channel
/// [1,1,1,C] operands between layouts until "transpose sinking did not
/// converge"; it must convert the graph and compute the same values.
// CHECK-LABEL: func.func @batch_moments
// CHECK: gopt.conv2d {{.*}}data_format = "NCHW"
// CHECK: gopt.reduce_mean {{.*}}axes = array<i64: 0, 2, 3>
// CHECK: gopt.squared_difference
// CHECK: gopt.conv2d {{.*}}data_format = "NCHW"
// CHECK: gopt.max_pool {{.*}}data_format = "NCHW"
// SAME: outputs match
func.func @batch_moments(%x: tensor<?x6x6x4xf32>) -> tensor<?x3x3x4xf32> {
  %w1 = gopt.constant dense<[[[[0.3, -0.2, 0.1, 0.25], [0.05, 0.2, -0.3, 0.1], [-0.1, 0.15, 0.2, -0.25], [0.2, -0.05, 0.1, 0.3]]]]> : tensor<1x1x4x4xf32>
  %c1 = gopt.conv2d %x, %w1 {padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x6x6x4xf32>, tensor<1x1x4x4xf32>) -> tensor<?x6x6x4xf32>
  %m1 = gopt.reduce_mean %c1 {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x6x6x4xf32>) -> tensor<1x1x1x4xf32>
  %sg1 = gopt.stop_gradient %m1 : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %sd1 = gopt.squared_difference %c1, %sg1 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %v1 = gopt.reduce_mean %sd1 {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x6x6x4xf32>) -> tensor<1x1x1x4xf32>
  %eps = gopt.constant dense<1.0e-03> : tensor<f32>
  %g1 = gopt.constant dense<[1.1, 0.9, 1.0, 1.2]> : tensor<4xf32>
  %b1 = gopt.constant dense<[-0.1, 0.2, 0.0, 0.05]> : tensor<4xf32>
  %ve1 = gopt.add %v1, %eps : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %r1 = gopt.rsqrt %ve1 : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %s1 = gopt.mul %r1, %g1 : (tensor<1x1x1x4xf32>, tensor<4xf32>) -> tensor<1x1x1x4xf32>
  %xs1 = gopt.mul %c1, %s1 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %ms1 = gopt.mul %m1, %s1 : (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %o1 = gopt.sub %b1, %ms1 : (tensor<4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %bn1 = gopt.add %xs1, %o1 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %a1 = gopt.relu %bn1 : (tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  %w2 = gopt.constant dense<[[[[-0.2, 0.1, 0.3, 0.05], [0.25, -0.15, 0.1, 0.2], [0.1, 0.3, -0.2, 0.15], [-0.05, 0.2, 0.25, -0.1]]]]> : tensor<1x1x4x4xf32>
  %c2 = gopt.conv2d %a1, %w2 {padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x6x6x4xf32>, tensor<1x1x4x4xf32>) -> tensor<?x6x6x4xf32>
  %m2 = gopt.reduce_mean %c2 {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x6x6x4xf32>) -> tensor<1x1x1x4xf32>
  %sg2 = gopt.stop_gradient %m2 : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %sd2 = gopt.squared_difference %c2, %sg2 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %v2 = gopt.reduce_mean %sd2 {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<?x6x6x4xf32>) -> tensor<1x1x1x4xf32>
  %g2 = gopt.constant dense<[0.95, 1.05, 1.15, 0.85]> : tensor<4xf32>
  %b2 = gopt.constant dense<[0.1, -0.05, 0.15, 0.0]> : tensor<4xf32>
  %ve2 = gopt.add %v2, %eps : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %r2 = gopt.rsqrt %ve2 : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %s2 = gopt.mul %r2, %g2 : (tensor<1x1x1x4xf32>, tensor<4xf32>) -> tensor<1x1x1x4xf32>
  %xs2 = gopt.mul %c2, %s2 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %ms2 = gopt.mul %m2, %s2 : (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %o2 = gopt.sub %b2, %ms2 : (tensor<4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %bn2 = gopt.add %xs2, %o2 : (tensor<?x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<?x6x6x4xf32>
  %res = gopt.add %bn2, %x : (tensor<?x6x6x4xf32>, tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  %a2 = gopt.relu %res : (tensor<?x6x6x4xf32>) -> tensor<?x6x6x4xf32>
  %p = gopt.max_pool %a2 {kernel = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<?x6x6x4xf32>) -> tensor<?x3x3x4xf32>
  return %p : tensor<?x3x3x4xf32>
}
