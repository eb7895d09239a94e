// RUN: gopt-run %s --grad-check --batch 2 --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff through gopt.if (an if on the same condition whose branches
/// recompute and differentiate the forward's) against finite differences,
/// through the runtime's subplans: conditions computed from the run-time
/// batch size, one true (then) and one false (else), so both branches'
/// backward passes run; a nested if in a then branch (its condition a
/// capture), a branch that yields a capture as it is, and parameters used
/// by one branch only (u: zeros from the if whose then branch ran). The
/// loss sums over the run-time batch (dynamic_reduce_sum). v and u are
/// added to zeros computed from an input, so gopt-lift-params makes them
/// parameters (captures are no trainable use).
// CHECK: grad-check
// CHECK-DAG: w {{.*}}: ok
// CHECK-DAG: v {{.*}}: ok
// CHECK-DAG: u {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x3xf32> {gopt.name = "x"}, %rin: tensor<4xf32> {gopt.name = "r"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w = gopt.constant dense<[[0.31, -0.42, 0.18, -0.51], [0.04, -0.16, -0.53, 0.27], [-0.55, -0.08, 0.39, 0.45]]> : tensor<3x4xf32> loc("w")
  %v0 = gopt.constant dense<[0.62, -0.35, 0.91, 0.27]> : tensor<4xf32> loc("v")
  %u0 = gopt.constant dense<[-0.23, 0.48, 0.15, -0.66]> : tensor<4xf32> loc("u")
  %c0 = gopt.constant dense<0.0> : tensor<f32>
  %rz = gopt.mul %rin, %c0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %v = gopt.add %rz, %v0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = gopt.add %rz, %u0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h = gopt.matmul %x, %w : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %shape = gopt.shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
  %n = gopt.slice %shape {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %two = gopt.constant dense<[2]> : tensor<1xi64>
  %three = gopt.constant dense<[3]> : tensor<1xi64>
  %e1 = gopt.equal %n, %two : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
  %e2 = gopt.equal %n, %three : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
  %c1 = gopt.reshape %e1 {shape = array<i64>} : (tensor<1xi1>) -> tensor<i1>
  %c2 = gopt.reshape %e2 {shape = array<i64>} : (tensor<1xi1>) -> tensor<i1>
  %y1 = gopt.if %c1 captures(%c1, %h, %v, %u : tensor<i1>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) : tensor<i1> -> tensor<?x4xf32> then {
  ^bb0(%c: tensor<i1>, %a: tensor<?x4xf32>, %b: tensor<4xf32>, %d: tensor<4xf32>):
    %t = gopt.tanh %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %r = gopt.if %c captures(%t, %b : tensor<?x4xf32>, tensor<4xf32>) : tensor<i1> -> tensor<?x4xf32> then {
    ^bb0(%p: tensor<?x4xf32>, %q: tensor<4xf32>):
      %m = gopt.mul %p, %q : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      gopt.yield %m : tensor<?x4xf32>
    } else {
    ^bb0(%p: tensor<?x4xf32>, %q: tensor<4xf32>):
      gopt.yield %p : tensor<?x4xf32>
    }
    gopt.yield %r : tensor<?x4xf32>
  } else {
  ^bb0(%c: tensor<i1>, %a: tensor<?x4xf32>, %b: tensor<4xf32>, %d: tensor<4xf32>):
    %s = gopt.sigmoid %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %m = gopt.mul %s, %d : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    gopt.yield %m : tensor<?x4xf32>
  }
  %y2 = gopt.if %c2 captures(%h, %v, %u : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) : tensor<i1> -> tensor<?x4xf32> then {
  ^bb0(%a: tensor<?x4xf32>, %b: tensor<4xf32>, %d: tensor<4xf32>):
    %t = gopt.tanh %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %m = gopt.mul %t, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    gopt.yield %m : tensor<?x4xf32>
  } else {
  ^bb0(%a: tensor<?x4xf32>, %b: tensor<4xf32>, %d: tensor<4xf32>):
    %s = gopt.sigmoid %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %m = gopt.add %s, %d : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %o = gopt.mul %m, %m : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    gopt.yield %o : tensor<?x4xf32>
  }
  %sum = gopt.add %y1, %y2 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %sq = gopt.mul %sum, %sum : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %zn = gopt.sub %n, %n : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %axc = gopt.constant dense<[0, 1]> : tensor<2xi64>
  %axes = gopt.add %axc, %zn : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %loss = gopt.dynamic_reduce_sum %sq, %axes : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
