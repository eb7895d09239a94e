// RUN: gopt-opt %s --gopt-data-parallel | FileCheck %s --check-prefix=ONE
// RUN: gopt-opt %s --gopt-data-parallel=bucket-mb=0.0001 | FileCheck %s --check-prefix=SPLIT
// RUN: gopt-opt %s --gopt-data-parallel='bucket-mb=0 reduction=sum' | FileCheck %s --check-prefix=EACH
// RUN: not gopt-opt %s --gopt-data-parallel=reduction=max -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: gopt-data-parallel: reduction must be 'mean' or 'sum', got 'max'

/// Gradients in backward's order (b2's first: the last layer's), bucketed
/// by size, each bucket right after its last gradient; the results keep
/// their attributes.
// ONE-LABEL: func @step
// ONE: %[[G2:.*]] = gopt.reduce_sum %{{.*}} {axes = array<i64: 0>}
// ONE-NEXT: %[[W2:.*]] = gopt.matmul
// ONE-NEXT: %[[W1:.*]] = gopt.matmul
// ONE-NEXT: %[[R:.*]]:3 = gopt.all_reduce %[[G2]], %[[W2]], %[[W1]] {reduction = "mean"}
// ONE: return %{{.*}}, %[[R]]#2, %[[R]]#1, %[[R]]#0 : tensor<f32>

/// 100 bytes per bucket: w2's gradient (12 x 4 bytes) joins b2's (4 bytes),
/// w1's (8 x 3 x 4 = 96 bytes) gets its own.
// SPLIT: %[[G2:.*]] = gopt.reduce_sum %{{.*}} {axes = array<i64: 0>}
// SPLIT-NEXT: %[[W2:.*]] = gopt.matmul
// SPLIT-NEXT: %[[R0:.*]]:2 = gopt.all_reduce %[[G2]], %[[W2]] {reduction = "mean"}
// SPLIT-NEXT: %[[W1:.*]] = gopt.matmul
// SPLIT-NEXT: %[[R1:.*]] = gopt.all_reduce %[[W1]] {reduction = "mean"}
// SPLIT: return %{{.*}}, %[[R1]], %[[R0]]#1, %[[R0]]#0

// EACH-COUNT-3: gopt.all_reduce %{{[^,]*}} : (
/// (sum is the default, not printed)
// EACH-NOT: gopt.all_reduce
func.func @step(%x: tensor<2x8xf32>, %w1: tensor<8x3xf32>, %w2: tensor<3x4xf32>, %b2: tensor<4xf32>, %d: tensor<2x4xf32>, %h: tensor<2x3xf32>, %dh: tensor<2x3xf32>)
    -> (tensor<f32> {gopt.name = "loss"},
        tensor<8x3xf32> {gopt.name = "grad/w1", gopt.gradient_of = "w1"},
        tensor<3x4xf32> {gopt.name = "grad/w2", gopt.gradient_of = "w2"},
        tensor<4xf32> {gopt.name = "grad/b2", gopt.gradient_of = "b2"}) {
  %l = gopt.reduce_sum %d {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<f32>
  %gb2 = gopt.reduce_sum %d {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
  %gw2 = gopt.matmul %h, %d {transpose_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gw1 = gopt.matmul %x, %dh {transpose_a = true} : (tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  return %l, %gw1, %gw2, %gb2 : tensor<f32>, tensor<8x3xf32>, tensor<3x4xf32>, tensor<4xf32>
}
