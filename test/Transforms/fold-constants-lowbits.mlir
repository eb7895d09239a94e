// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fold-constants | FileCheck %s

/// Casts to float8 fold with the runtime's rounding: 1.0625 ties to 1.0,
/// 500 and -1000 saturate to +-448 or (saturate = false) become NaN; to
/// i4 2.5 and 3.5 round to even and 100 clamps to 7.
// CHECK-LABEL: func @to_low_precision
func.func @to_low_precision() -> (tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xi4>) {
  // CHECK-DAG: gopt.constant dense<[1.000000e+00, 4.480000e+02, -4.480000e+02]> : tensor<3xf8E4M3FN>
  // CHECK-DAG: gopt.constant dense<[1.000000e+00, 0x7F, 0xFF]> : tensor<3xf8E4M3FN>
  // CHECK-DAG: gopt.constant dense<[2, 4, 7]> : tensor<3xi4>
  %c = gopt.constant dense<[1.0625, 500.0, -1000.0]> : tensor<3xf32>
  %a = gopt.cast %c : (tensor<3xf32>) -> tensor<3xf8E4M3FN>
  %b = gopt.cast %c {saturate = false} : (tensor<3xf32>) -> tensor<3xf8E4M3FN>
  %d = gopt.constant dense<[2.5, 3.5, 100.0]> : tensor<3xf32>
  %e = gopt.cast %d : (tensor<3xf32>) -> tensor<3xi4>
  return %a, %b, %e : tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xi4>
}

// -----

/// An int4 weight's dequantization folds to f32 (the ONNX importer's
/// composition), reading the weight's one-byte-per-element blob.
// CHECK-LABEL: func @dequantize_int4
func.func @dequantize_int4() -> tensor<17xf32> {
  // CHECK: gopt.constant dense_resource<gopt_folded{{.*}}> : tensor<17xf32>
  // CHECK-NOT: gopt.cast
  %w = gopt.constant dense_resource<w4> : tensor<17xi4>
  %s = gopt.constant dense<0.5> : tensor<f32>
  %f = gopt.cast %w : (tensor<17xi4>) -> tensor<17xf32>
  %y = gopt.mul %f, %s : (tensor<17xf32>, tensor<f32>) -> tensor<17xf32>
  return %y : tensor<17xf32>
}

// -8 ... 7, -8 times 0.5: -4.0 (0xC0800000), -3.5, ..., 3.5, -4.0.
// CHECK: gopt_folded{{[_0-9]*}}: "0x04000000000080C0000060C0000040C0000020C0000000C00000C0BF000080BF000000BF000000000000003F0000803F0000C03F00000040000020400000404000006040000080C0"

{-#
  dialect_resources: {
    builtin: {
      w4: "0x01000000F8F9FAFBFCFDFEFF0001020304050607F8"
    }
  }
#-}
