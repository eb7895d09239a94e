// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -gopt-place-devices -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %t.mlir --compare %s --atol 0 --rtol 0
// RUN: gopt-run %t.mlir --backend reference --compare %s --atol 0 --rtol 0

/// A placed plan (ops on "cuda" and "cpu", transfers) runs on a CPU session:
/// "cuda" ops run on the host and transfers are copies, bit-exact.
// CHECK: gopt.transfer
// CHECK: gopt.softplus {{.*}}device = "cpu"
// CHECK: gopt.transfer
// CHECK: gopt.relu {{.*}}device = "gpu"
/// (softplus, of the math family, has no CUDA kernel: the CPU island.)
func.func @island(%x: tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32> {
  %w = gopt.constant dense<0.25> : tensor<3x3x4x4xf32>
  %c = gopt.conv2d %x, %w {padding = "SAME"} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x8x8x4xf32>
  %y = gopt.softplus %c : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  %r = gopt.relu %y : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  %t = gopt.mul %r, %r : (tensor<2x8x8x4xf32>, tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  return %t : tensor<2x8x8x4xf32>
}
