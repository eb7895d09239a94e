// REQUIRES: gopt-run-mlir
// RUN: gopt-run %s --optimize --threads 2 --warmup 0 --iterations 1 --profile | FileCheck %s
// RUN: gopt-run %s --optimize --compare %s --compare-backend cpu --atol 1e-5 --rtol 1e-4 | FileCheck %s --check-prefix=SAME

/// GELU as PyTorch exports it after a Linear layer (matmul, bias, then x /
/// sqrt(2), erf, + 1, times x, times 0.5): canonicalization makes it one
/// gelu, and the CPU schedule runs matmul, bias and gelu as one oneDNN
/// matmul with post-ops; it computes what the unoptimized graph computes.
// CHECK: matmul+add+gelu cpu onednn
// CHECK-NOT: erf
// SAME: tolerance: atol 1e-05, rtol 0.0001: outputs match
func.func @main(%x: tensor<6x16xf32>) -> tensor<6x32xf32> {
  %w = gopt.constant dense<0.05> : tensor<16x32xf32>
  %b = gopt.constant dense<[-1.50, -1.40, -1.30, -1.20, -1.10, -1.00, -0.90, -0.80, -0.70, -0.60, -0.50, -0.40, -0.30, -0.20, -0.10, 0.00, 0.10, 0.20, 0.30, 0.40, 0.50, 0.60, 0.70, 0.80, 0.90, 1.00, 1.10, 1.20, 1.30, 1.40, 1.50, 1.60]> : tensor<32xf32>
  %mm = gopt.matmul %x, %w : (tensor<6x16xf32>, tensor<16x32xf32>) -> tensor<6x32xf32>
  %y = gopt.add %mm, %b : (tensor<6x32xf32>, tensor<32xf32>) -> tensor<6x32xf32>
  %sqrt2 = gopt.constant dense<1.41421354> : tensor<f32>
  %one = gopt.constant dense<1.0> : tensor<f32>
  %half = gopt.constant dense<0.5> : tensor<f32>
  %d = gopt.div %y, %sqrt2 : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
  %e = gopt.erf %d : (tensor<6x32xf32>) -> tensor<6x32xf32>
  %a = gopt.add %e, %one : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
  %m = gopt.mul %y, %a : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
  %g = gopt.mul %m, %half : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
  return %g : tensor<6x32xf32>
}
