// RUN: gopt-run %s --grad-check --batch 2 --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff through gopt.loop (backpropagation through iterations: a replay
/// that stacks each iteration's carried values, then a reverse loop that
/// recomputes and differentiates iteration T-1-j) against finite
/// differences, through the runtime's subplans: three iterations (the trip
/// count computed from the run-time batch size, so nothing is known at
/// compile time) of a recurrence h' = tanh(h * a + x w) + 0.5 h carried
/// with an integer counter (no gradient), the iteration number as a float
/// in the body, a capture used in every iteration (a: its gradient sums
/// over them; added to zeros computed from an input, so gopt-lift-params
/// makes it a parameter) and a scan output of each iteration's state.
// CHECK: grad-check
// CHECK-DAG: w {{.*}}: ok
// CHECK-DAG: a {{.*}}: ok
// CHECK-DAG: h0 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}, %rin: tensor<4xf32> {gopt.name = "r"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w = gopt.constant dense<[[0.31, -0.42, 0.18, -0.51], [0.04, -0.16, -0.53, 0.27], [-0.55, -0.08, 0.39, 0.45]]> : tensor<3x4xf32> loc("w")
  %a0 = gopt.constant dense<[0.62, -0.35, 0.91, 0.27]> : tensor<4xf32> loc("a")
  %cz = gopt.constant dense<0.0> : tensor<f32>
  %rz = gopt.mul %rin, %cz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %a = gopt.add %rz, %a0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h0 = gopt.constant dense<[0.12, -0.3, 0.25, 0.4]> : tensor<4xf32> loc("h0")
  %xw = gopt.matmul %x, %w : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %zeros = gopt.mul %xw, %xw : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %c0 = gopt.constant dense<0.0> : tensor<f32>
  %z = gopt.mul %zeros, %c0 : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %h = gopt.add %z, %h0 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %shape = gopt.shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
  %n = gopt.slice %shape {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %one = gopt.constant dense<[1]> : tensor<1xi64>
  %t1 = gopt.add %n, %one : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %trips = gopt.reshape %t1 {shape = array<i64>} : (tensor<1xi64>) -> tensor<i64>
  %true = gopt.constant dense<true> : tensor<i1>
  %k0 = gopt.constant dense<0> : tensor<i64>
  %r:3 = gopt.loop %trips, %true carried(%h, %k0 : tensor<?x4xf32>, tensor<i64>) captures(%a, %xw : tensor<4xf32>, tensor<?x4xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<?x4xf32>, tensor<i64>, tensor<?x?x4xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %s: tensor<?x4xf32>, %k: tensor<i64>, %aa: tensor<4xf32>, %u: tensor<?x4xf32>):
    %sa = gopt.mul %s, %aa : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %pre = gopt.add %sa, %u : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %th = gopt.tanh %pre : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %half = gopt.constant dense<0.5> : tensor<f32>
    %sh = gopt.mul %s, %half : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
    %fi = gopt.cast %i : (tensor<i64>) -> tensor<f32>
    %tenth = gopt.constant dense<0.1> : tensor<f32>
    %step = gopt.mul %fi, %tenth : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %thi = gopt.mul %th, %step : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
    %next0 = gopt.add %th, %sh : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %next = gopt.add %next0, %thi : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %ki = gopt.constant dense<1> : tensor<i64>
    %k1 = gopt.add %k, %ki : (tensor<i64>, tensor<i64>) -> tensor<i64>
    gopt.yield %c, %next, %k1, %next : tensor<i1>, tensor<?x4xf32>, tensor<i64>, tensor<?x4xf32>
  }
  %sq = gopt.mul %r#0, %r#0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %zn = gopt.sub %n, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ax2c = gopt.constant dense<[0, 1]> : tensor<2xi64>
  %ax2 = gopt.add %ax2c, %zn : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %ax3c = gopt.constant dense<[0, 1, 2]> : tensor<3xi64>
  %ax3 = gopt.add %ax3c, %zn : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %l1 = gopt.dynamic_reduce_sum %sq, %ax2 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<f32>
  %scan = gopt.mul %r#2, %r#2 : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %l2 = gopt.dynamic_reduce_sum %scan, %ax3 : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<f32>
  %wt = gopt.constant dense<0.3> : tensor<f32>
  %l2w = gopt.mul %l2, %wt : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %loss = gopt.add %l1, %l2w : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
