// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -canonicalize -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-6 --rtol 1e-5

/// HardSwish and HardSigmoid as PaddlePaddle's exporter writes them (PP-OCR:
/// x * clip(x + 3, 0, 6) / 6, and clip(x + 3, 0, 6) / 6 before a Mul)
/// become one op each, computing the same values.
// CHECK-LABEL: func.func @decomposed
// CHECK-NEXT: %[[SWISH:.*]] = gopt.hard_swish %arg0
// CHECK-NEXT: %[[SIG:.*]] = gopt.hard_sigmoid %arg0 {alpha = 0.166666672 : f32}
// CHECK-NEXT: %[[SWISH6:.*]] = gopt.hard_swish %arg0
// CHECK-NEXT: return %[[SWISH]], %[[SIG]], %[[SWISH6]]
func.func @decomposed(%x: tensor<2x8x5x5xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>) {
  %three = gopt.constant dense<3.0> : tensor<1xf32>
  %six = gopt.constant dense<6.0> : tensor<f32>
  %shifted = gopt.add %x, %three : (tensor<2x8x5x5xf32>, tensor<1xf32>) -> tensor<2x8x5x5xf32>
  %ramp = gopt.clip %shifted {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %scaled = gopt.mul %x, %ramp : (tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %swish = gopt.div %scaled, %six : (tensor<2x8x5x5xf32>, tensor<f32>) -> tensor<2x8x5x5xf32>
  %sigmoid = gopt.div %ramp, %six : (tensor<2x8x5x5xf32>, tensor<f32>) -> tensor<2x8x5x5xf32>
  // The clip is often already a relu6, and the product in either order.
  %ramp6 = gopt.relu6 %shifted : (tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %scaled6 = gopt.mul %ramp6, %x : (tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %swish6 = gopt.div %scaled6, %six : (tensor<2x8x5x5xf32>, tensor<f32>) -> tensor<2x8x5x5xf32>
  return %swish, %sigmoid, %swish6 : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>
}


