// RUN: gopt-run %s --grad-check --batch 3 --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of the dynamic ops whose value operands are run-time values
/// (each is a constant plus zeros computed from x's run-time shape, so
/// nothing folds to the static ops): dynamic_slice (a step of 1 and a
/// negative step from a negative start), dynamic_pad (constant, reflect,
/// edge and wrap), dynamic_expand and dynamic_tile (the forward op applied
/// to the element positions, dy scatter-added back), the five dynamic
/// reductions (keep_dims or not, negative axes, every axis to a scalar)
/// and dynamic_stft with a run-time frame_step (a dynamic frame
/// count) and dynamic_max_unpool with a run-time output_shape that pads H
/// and crops W (the cropped elements get no gradient), against finite
/// differences of a sum of squares.
// CHECK: grad-check
// CHECK-DAG: p.b {{.*}}: ok
// CHECK-DAG: q.b {{.*}}: ok
// CHECK-DAG: s.b {{.*}}: ok
// CHECK-DAG: u.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x4x5xf32> {gopt.name = "x"}, %xq: tensor<4x1xf32> {gopt.name = "xq"}, %xs: tensor<1x16x1xf32> {gopt.name = "xs"}, %xu: tensor<1x2x2x2xf32> {gopt.name = "xu"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %p_b = gopt.constant dense<[[[-0.743, -0.001, 0.203, -0.943, -0.704], [0.856, -0.859, -0.74, 0.897, 0.244], [-0.262, 0.023, 0.326, -0.449, -0.724], [0.576, 0.341, 0.025, 0.633, 0.098]], [[0.962, -0.591, 0.107, -0.033, -0.293], [0.183, -0.529, 0.604, 0.735, -0.742], [-0.066, -0.446, -0.834, 0.792, -0.14], [-0.705, 0.347, -0.596, 0.803, -0.566]], [[-0.934, -0.598, -0.309, -0.062, 0.812], [0.395, -0.321, -0.966, -0.68, 0.993], [-0.081, 0.382, -0.891, -0.932, 0.692], [0.176, -0.383, -0.365, -0.822, -0.655]]]> : tensor<3x4x5xf32> loc("p.b")
  %q_b = gopt.constant dense<[[-0.951], [0.678], [-0.067], [-0.746]]> : tensor<4x1xf32> loc("q.b")
  %s_b = gopt.constant dense<[[[0.478], [-0.609], [-0.876], [0.197], [0.792], [-0.946], [0.61], [-0.62], [-0.814], [-0.964], [-0.414], [0.454], [-0.014], [0.706], [-0.566], [-0.37]]]> : tensor<1x16x1xf32> loc("s.b")
  %h = gopt.add %x, %p_b : (tensor<?x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %q = gopt.add %xq, %q_b : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %sig = gopt.add %xs, %s_b : (tensor<1x16x1xf32>, tensor<1x16x1xf32>) -> tensor<1x16x1xf32>
  %shape = gopt.shape %x : (tensor<?x4x5xf32>) -> tensor<3xi64>
  %n = gopt.slice %shape {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<1xi64>
  %z = gopt.sub %n, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c1 = gopt.constant dense<[1]> : tensor<1xi64>
  %v1 = gopt.add %c1, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c2 = gopt.constant dense<[-1]> : tensor<1xi64>
  %v2 = gopt.add %c2, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c3 = gopt.constant dense<[1]> : tensor<1xi64>
  %v3 = gopt.add %c3, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c4 = gopt.constant dense<[1]> : tensor<1xi64>
  %v4 = gopt.add %c4, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %s1 = gopt.dynamic_slice %h, %v1, %v2, %v3, %v4 : (tensor<3x4x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x2x5xf32>
  %s1_sq = gopt.mul %s1, %s1 : (tensor<3x2x5xf32>, tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
  %s1_l = gopt.reduce_sum %s1_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x2x5xf32>) -> tensor<f32>
  %c5 = gopt.constant dense<[-1]> : tensor<1xi64>
  %v5 = gopt.add %c5, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c6 = gopt.constant dense<[-6]> : tensor<1xi64>
  %v6 = gopt.add %c6, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c7 = gopt.constant dense<[2]> : tensor<1xi64>
  %v7 = gopt.add %c7, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c8 = gopt.constant dense<[-2]> : tensor<1xi64>
  %v8 = gopt.add %c8, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %s2 = gopt.dynamic_slice %h, %v5, %v6, %v7, %v8 : (tensor<3x4x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x4x3xf32>
  %s2_sq = gopt.mul %s2, %s2 : (tensor<3x4x3xf32>, tensor<3x4x3xf32>) -> tensor<3x4x3xf32>
  %s2_l = gopt.reduce_sum %s2_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x4x3xf32>) -> tensor<f32>
  %half = gopt.constant dense<[0.5]> : tensor<1xf32>
  %c9 = gopt.constant dense<[0, 1, 2, 0, 0, 1]> : tensor<6xi64>
  %v9 = gopt.add %c9, %z : (tensor<6xi64>, tensor<1xi64>) -> tensor<6xi64>
  %pc = gopt.dynamic_pad %h, %v9, %half {mode = "constant"} : (tensor<3x4x5xf32>, tensor<6xi64>, tensor<1xf32>) -> tensor<3x5x8xf32>
  %pc_sq = gopt.mul %pc, %pc : (tensor<3x5x8xf32>, tensor<3x5x8xf32>) -> tensor<3x5x8xf32>
  %pc_l = gopt.reduce_sum %pc_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x5x8xf32>) -> tensor<f32>
  %c10 = gopt.constant dense<[0, 2, 1, 0, 1, 2]> : tensor<6xi64>
  %v10 = gopt.add %c10, %z : (tensor<6xi64>, tensor<1xi64>) -> tensor<6xi64>
  %pr = gopt.dynamic_pad %h, %v10, %half {mode = "reflect"} : (tensor<3x4x5xf32>, tensor<6xi64>, tensor<1xf32>) -> tensor<3x7x8xf32>
  %pr_sq = gopt.mul %pr, %pr : (tensor<3x7x8xf32>, tensor<3x7x8xf32>) -> tensor<3x7x8xf32>
  %pr_l = gopt.reduce_sum %pr_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x7x8xf32>) -> tensor<f32>
  %c11 = gopt.constant dense<[1, 0, 0, 0, 0, 1]> : tensor<6xi64>
  %v11 = gopt.add %c11, %z : (tensor<6xi64>, tensor<1xi64>) -> tensor<6xi64>
  %pe = gopt.dynamic_pad %h, %v11, %half {mode = "edge"} : (tensor<3x4x5xf32>, tensor<6xi64>, tensor<1xf32>) -> tensor<4x4x6xf32>
  %pe_sq = gopt.mul %pe, %pe : (tensor<4x4x6xf32>, tensor<4x4x6xf32>) -> tensor<4x4x6xf32>
  %pe_l = gopt.reduce_sum %pe_sq {axes = array<i64: 0, 1, 2>} : (tensor<4x4x6xf32>) -> tensor<f32>
  %c12 = gopt.constant dense<[0, 0, 3, 0, 0, 2]> : tensor<6xi64>
  %v12 = gopt.add %c12, %z : (tensor<6xi64>, tensor<1xi64>) -> tensor<6xi64>
  %pw = gopt.dynamic_pad %h, %v12, %half {mode = "wrap"} : (tensor<3x4x5xf32>, tensor<6xi64>, tensor<1xf32>) -> tensor<3x4x10xf32>
  %pw_sq = gopt.mul %pw, %pw : (tensor<3x4x10xf32>, tensor<3x4x10xf32>) -> tensor<3x4x10xf32>
  %pw_l = gopt.reduce_sum %pw_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x4x10xf32>) -> tensor<f32>
  %e1 = gopt.dynamic_expand %q, %shape : (tensor<4x1xf32>, tensor<3xi64>) -> tensor<3x4x5xf32>
  %e1_sq = gopt.mul %e1, %e1 : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %e1_l = gopt.reduce_sum %e1_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x4x5xf32>) -> tensor<f32>
  %c13 = gopt.constant dense<[2, 3]> : tensor<2xi64>
  %v13 = gopt.add %c13, %z : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %t1 = gopt.dynamic_tile %q, %v13 : (tensor<4x1xf32>, tensor<2xi64>) -> tensor<8x3xf32>
  %t1_sq = gopt.mul %t1, %t1 : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %t1_l = gopt.reduce_sum %t1_sq {axes = array<i64: 0, 1>} : (tensor<8x3xf32>) -> tensor<f32>
  %third = gopt.constant dense<0.3> : tensor<f32>
  %one = gopt.constant dense<1.0> : tensor<f32>
  %h3 = gopt.mul %h, %third : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4x5xf32>
  %h2 = gopt.add %h3, %one : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4x5xf32>
  %c14 = gopt.constant dense<[1]> : tensor<1xi64>
  %v14 = gopt.add %c14, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rs = gopt.dynamic_reduce_sum %h, %v14 : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x5xf32>
  %rs_sq = gopt.mul %rs, %rs : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %rs_l = gopt.reduce_sum %rs_sq {axes = array<i64: 0, 1>} : (tensor<3x5xf32>) -> tensor<f32>
  %c15 = gopt.constant dense<[-1, 0]> : tensor<2xi64>
  %v15 = gopt.add %c15, %z : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %rm = gopt.dynamic_reduce_mean %h, %v15 {keep_dims = true} : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<1x4x1xf32>
  %rm_sq = gopt.mul %rm, %rm : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %rm_l = gopt.reduce_sum %rm_sq {axes = array<i64: 0, 1, 2>} : (tensor<1x4x1xf32>) -> tensor<f32>
  %c16 = gopt.constant dense<[2]> : tensor<1xi64>
  %v16 = gopt.add %c16, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rx = gopt.dynamic_reduce_max %h, %v16 : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x4xf32>
  %rx_sq = gopt.mul %rx, %rx : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %rx_l = gopt.reduce_sum %rx_sq {axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<f32>
  %c17 = gopt.constant dense<[1]> : tensor<1xi64>
  %v17 = gopt.add %c17, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rn = gopt.dynamic_reduce_min %h, %v17 {keep_dims = true} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
  %rn_sq = gopt.mul %rn, %rn : (tensor<3x1x5xf32>, tensor<3x1x5xf32>) -> tensor<3x1x5xf32>
  %rn_l = gopt.reduce_sum %rn_sq {axes = array<i64: 0, 1, 2>} : (tensor<3x1x5xf32>) -> tensor<f32>
  %c18 = gopt.constant dense<[2]> : tensor<1xi64>
  %v18 = gopt.add %c18, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rp = gopt.dynamic_reduce_prod %h2, %v18 : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x4xf32>
  %rp_sq = gopt.mul %rp, %rp : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %rp_l = gopt.reduce_sum %rp_sq {axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<f32>
  %call = gopt.constant dense<[-1, 0, 1]> : tensor<3xi64>
  %vall = gopt.add %call, %z : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %ra = gopt.dynamic_reduce_sum %h, %vall : (tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<f32>
  %ra_l = gopt.mul %ra, %ra : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c19 = gopt.constant dense<[3]> : tensor<1xi64>
  %v19 = gopt.add %c19, %z : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %win = gopt.constant dense<[0.2, 0.5, 0.9, 1.0, 0.7, 0.3]> : tensor<6xf32>
  %st = gopt.dynamic_stft %sig, %win, %v19 : (tensor<1x16x1xf32>, tensor<6xf32>, tensor<1xi64>) -> tensor<1x?x4x2xf32>
  %st_sq = gopt.mul %st, %st : (tensor<1x?x4x2xf32>, tensor<1x?x4x2xf32>) -> tensor<1x?x4x2xf32>
  %cst4 = gopt.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %vst4 = gopt.add %cst4, %z : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  %st_l = gopt.dynamic_reduce_sum %st_sq, %vst4 : (tensor<1x?x4x2xf32>, tensor<4xi64>) -> tensor<f32>
  %acc0 = gopt.add %s1_l, %s2_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc1 = gopt.add %acc0, %pc_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc2 = gopt.add %acc1, %pr_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc3 = gopt.add %acc2, %pe_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc4 = gopt.add %acc3, %pw_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc5 = gopt.add %acc4, %e1_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc6 = gopt.add %acc5, %t1_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc7 = gopt.add %acc6, %rs_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc8 = gopt.add %acc7, %rm_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc9 = gopt.add %acc8, %rx_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc10 = gopt.add %acc9, %rn_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc11 = gopt.add %acc10, %rp_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc12 = gopt.add %acc11, %ra_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %loss0 = gopt.add %acc12, %st_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %u_b = gopt.constant dense<[[[[0.31, -0.72], [0.55, 0.18]], [[-0.44, 0.91], [0.27, -0.63]]]]> : tensor<1x2x2x2xf32> loc("u.b")
  %u = gopt.add %xu, %u_b : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %uidx = gopt.constant dense<[[[[1, 3], [8, 14]], [[20, 23], [25, 31]]]]> : tensor<1x2x2x2xi64>
  %uc = gopt.constant dense<[1, 2, 5, 3]> : tensor<4xi64>
  %ushape = gopt.add %uc, %z : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>
  %un = gopt.dynamic_max_unpool %u, %uidx, %ushape {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> tensor<1x2x5x3xf32>
  %un_sq = gopt.mul %un, %un : (tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>) -> tensor<1x2x5x3xf32>
  %un_l = gopt.reduce_sum %un_sq {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x2x5x3xf32>) -> tensor<f32>
  %loss = gopt.add %loss0, %un_l : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
