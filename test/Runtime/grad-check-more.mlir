// RUN: gopt-run %s --grad-check --batch 3 | FileCheck %s

/// Autodiff of relu6, clip, leaky_relu, abs, concat (a negative axis), pad,
/// slice, max, min,
/// squared_difference, rsqrt, softmax and log_softmax against finite
/// differences (points at a kink of relu6/clip/abs/max are skipped).
// CHECK-DAG: w1 {{.*}}: ok
// CHECK-DAG: b1 {{.*}}: ok
// CHECK-DAG: w2 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<[[0.5, -0.3, 0.2, 0.8, -0.6, 0.1], [0.4, 0.1, -0.6, 0.3, 0.2, -0.5], [-0.2, 0.5, 0.3, -0.4, 0.7, 0.2], [0.3, -0.1, 0.4, 0.2, -0.3, 0.6]]> : tensor<4x6xf32> loc("w1")
  %b1 = gopt.constant dense<[0.1, -0.2, 0.3, 0.05, -0.1, 0.2]> : tensor<6xf32> loc("b1")
  %w2 = gopt.constant dense<[[0.3, -0.2, 0.5], [-0.4, 0.2, 0.1], [0.1, 0.3, -0.2], [0.2, -0.1, 0.4], [-0.3, 0.4, 0.1], [0.1, 0.2, -0.3], [0.4, -0.3, 0.2], [-0.2, 0.1, 0.3], [0.3, 0.3, -0.1], [0.1, -0.4, 0.2], [-0.1, 0.2, 0.4], [0.2, 0.1, -0.2]]> : tensor<12x3xf32> loc("w2")
  %three = gopt.constant dense<3.0> : tensor<f32>
  %one = gopt.constant dense<1.0> : tensor<f32>
  %0 = gopt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  %h = gopt.add %0, %b1 : (tensor<?x6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  %h3 = gopt.mul %h, %three : (tensor<?x6xf32>, tensor<f32>) -> tensor<?x6xf32>
  %a = gopt.relu6 %h3 : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %c = gopt.clip %h {min = -0.5 : f32, max = 0.5 : f32} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %l = gopt.leaky_relu %h {alpha = 0.1 : f32} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %ab = gopt.abs %h : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %cat = gopt.concat %a, %c, %l, %ab {axis = -1 : i64} : (tensor<?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x24xf32>
  %p = gopt.pad %cat {pads = array<i64: 0, 0, 1, 2>} : (tensor<?x24xf32>) -> tensor<?x27xf32>
  %s1 = gopt.slice %p {starts = array<i64: 0, 1>, ends = array<i64: 9223372036854775807, 13>, steps = array<i64: 1, 1>} : (tensor<?x27xf32>) -> tensor<?x12xf32>
  %s2 = gopt.slice %p {starts = array<i64: 0, 13>, ends = array<i64: 9223372036854775807, 25>, steps = array<i64: 1, 1>} : (tensor<?x27xf32>) -> tensor<?x12xf32>
  %mx = gopt.max %s1, %s2 : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  %mn = gopt.min %s1, %s2 : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  %sq = gopt.squared_difference %mx, %mn : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  %sq1 = gopt.add %sq, %one : (tensor<?x12xf32>, tensor<f32>) -> tensor<?x12xf32>
  %r = gopt.rsqrt %sq1 : (tensor<?x12xf32>) -> tensor<?x12xf32>
  %sum = gopt.add %r, %mx : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  %sm = gopt.softmax %sum : (tensor<?x12xf32>) -> tensor<?x12xf32>
  %lsm = gopt.log_softmax %sum : (tensor<?x12xf32>) -> tensor<?x12xf32>
  %z = gopt.add %sm, %lsm : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  %out = gopt.matmul %z, %w2 : (tensor<?x12xf32>, tensor<12x3xf32>) -> tensor<?x3xf32>
  return %out : tensor<?x3xf32>
}
