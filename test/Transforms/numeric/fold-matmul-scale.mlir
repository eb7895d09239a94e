// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s --gopt-fold-batch-norm -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-4
// RUN: gopt-opt %s --gopt-fold-batch-norm=fold-matmul-scale=false | FileCheck %s --check-prefix=OFF

/// ConvNeXt's layer scale: a constant per-column multiply after a matmul
/// and its bias add folds into the weights and the bias ([K, N] weights,
/// [N, K] with transpose_b, and without a bias); the residual add after it
/// stays. A multiply that varies along the rows, and one of a matmul whose
/// result has another reader, stay.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = gopt.matmul %arg0, %{{.*}} : (tensor<2x3x4xf32>, tensor<4x5xf32>)
// CHECK-NEXT: %[[B:.*]] = gopt.add %[[A]], %{{.*}} : (tensor<2x3x5xf32>, tensor<5xf32>)
// CHECK-NEXT: gopt.add %[[B]], %arg1
// CHECK-NOT: gopt.mul %[[B]]
// CHECK: %[[C:.*]] = gopt.matmul %arg0, %{{.*}} {transpose_b = true}
// CHECK-NOT: gopt.mul %[[C]]
// CHECK: %[[D:.*]] = gopt.matmul %arg0
// CHECK: gopt.mul %[[D]], %{{.*}} : (tensor<2x3x5xf32>, tensor<3x1xf32>)
// CHECK: %[[E:.*]] = gopt.matmul %arg0
// CHECK: gopt.mul %[[E]]
// OFF-COUNT-4: gopt.mul
func.func @main(%x: tensor<2x3x4xf32>, %r: tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %w = gopt.constant dense<[[0.1, -0.2, 0.3, 0.4, 0.5], [0.6, -0.7, 0.8, 0.9, 1.0], [-0.5, 0.4, 0.3, 0.2, 0.1], [0.2, 0.2, -0.2, 0.3, -0.3]]> : tensor<4x5xf32>
  %wt = gopt.constant dense<[[0.1, 0.6, -0.5, 0.2], [-0.2, -0.7, 0.4, 0.2], [0.3, 0.8, 0.3, -0.2], [0.4, 0.9, 0.2, 0.3], [0.5, 1.0, 0.1, -0.3]]> : tensor<5x4xf32>
  %b = gopt.constant dense<[0.1, -0.2, 0.3, 0.05, 0.5]> : tensor<5xf32>
  %s = gopt.constant dense<[[[1.5, -2.0, 0.5, 3.0, 0.25]]]> : tensor<1x1x5xf32>
  %rows = gopt.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %m1 = gopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %a1 = gopt.add %m1, %b : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %s1 = gopt.mul %a1, %s : (tensor<2x3x5xf32>, tensor<1x1x5xf32>) -> tensor<2x3x5xf32>
  %y1 = gopt.add %s1, %r : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>

  %m2 = gopt.matmul %x, %wt {transpose_b = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %y2 = gopt.mul %s, %m2 : (tensor<1x1x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>

  %m3 = gopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %y3 = gopt.mul %m3, %rows : (tensor<2x3x5xf32>, tensor<3x1xf32>) -> tensor<2x3x5xf32>

  %m4 = gopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %y4 = gopt.mul %m4, %s : (tensor<2x3x5xf32>, tensor<1x1x5xf32>) -> tensor<2x3x5xf32>
  return %y1, %y2, %y3, %y4, %m4 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
