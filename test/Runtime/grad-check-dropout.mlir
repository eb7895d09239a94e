// RUN: gopt-run %s --grad-check --batch 4 | FileCheck %s
// RUN: gopt-opt %s --gopt-lift-params --gopt-add-loss --gopt-autodiff | FileCheck %s --check-prefix=IR

/// Training-mode dropout: dropout_grad recomputes the forward op's mask from
/// its seed. --grad-check runs its session with repeated randomness (every
/// run draws the first run's masks), so the finite differences see the
/// masks the gradient was computed with.
// CHECK: gradients match finite differences

/// Two dropouts get distinct seeds; each gradient uses its forward op's.
// IR: gopt.dropout %{{.*}} {seed = 1 : i64, training = true}
// IR: gopt.dropout %{{.*}} {ratio = 2.500000e-01 : f32, seed = 2 : i64, training = true}
// IR: gopt.dropout_grad %{{.*}} {ratio = 2.500000e-01 : f32, seed = 2 : i64}
// IR: gopt.dropout_grad %{{.*}} {ratio = 5.000000e-01 : f32, seed = 1 : i64}
func.func @main(%x: tensor<?x6xf32> {gopt.name = "x"}) -> (tensor<?x3xf32> {gopt.name = "logits"}) {
  %w1 = gopt.constant dense<0.3> : tensor<6x8xf32> loc("w1")
  %w2 = gopt.constant dense<[[0.1, -0.2, 0.3], [0.2, 0.1, -0.1], [-0.3, 0.2, 0.1], [0.1, 0.1, 0.2], [0.2, -0.1, 0.1], [-0.1, 0.3, 0.2], [0.3, 0.2, -0.2], [0.1, -0.3, 0.1]]> : tensor<8x3xf32> loc("w2")
  %0 = gopt.matmul %x, %w1 : (tensor<?x6xf32>, tensor<6x8xf32>) -> tensor<?x8xf32>
  %1 = gopt.dropout %0 {ratio = 0.5 : f32, training = true} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = gopt.tanh %1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = gopt.dropout %2 {ratio = 0.25 : f32, training = true} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %4 = gopt.matmul %3, %w2 : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
