// RUN: gopt-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: gopt-opt %s -split-input-file -mlir-print-op-generic | gopt-opt -split-input-file | FileCheck %s

/// f64, i16 and the unsigned integer types: constants print their values
/// in full (ui64 beyond int64, ui8 beyond int8), ops accept them where
/// their operand constraints say so, and cast converts between any two.

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf64>, tensor<2xi16>, tensor<2xui8>, tensor<2xui16>, tensor<2xui32>, tensor<2xui64>) {
  // CHECK: gopt.constant dense<[1.000000e-01, -1.000000e+300]> : tensor<2xf64>
  %0 = gopt.constant dense<[0.1, -1.0e300]> : tensor<2xf64>
  // CHECK: gopt.constant dense<[-32768, 32767]> : tensor<2xi16>
  %1 = gopt.constant dense<[-32768, 32767]> : tensor<2xi16>
  // CHECK: gopt.constant dense<[0, 255]> : tensor<2xui8>
  %2 = gopt.constant dense<[0, 255]> : tensor<2xui8>
  // CHECK: gopt.constant dense<[1, 65535]> : tensor<2xui16>
  %3 = gopt.constant dense<[1, 65535]> : tensor<2xui16>
  // CHECK: gopt.constant dense<[1, 4294967295]> : tensor<2xui32>
  %4 = gopt.constant dense<[1, 4294967295]> : tensor<2xui32>
  // CHECK: gopt.constant dense<[1, 18446744073709551615]> : tensor<2xui64>
  %5 = gopt.constant dense<[1, 18446744073709551615]> : tensor<2xui64>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf64>, tensor<2xi16>, tensor<2xui8>, tensor<2xui16>, tensor<2xui32>, tensor<2xui64>
}

// -----

// CHECK-LABEL: func @arithmetic
func.func @arithmetic(%d: tensor<2x3xf64>, %e: tensor<3xf64>, %u: tensor<4xui32>, %s: tensor<4xi16>) -> (tensor<2x3xf64>, tensor<2xf64>, tensor<4xui32>, tensor<4xi16>, tensor<4xi1>) {
  // CHECK: gopt.add %{{.*}}, %{{.*}} : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %0 = gopt.add %d, %e : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  // CHECK: gopt.exp %{{.*}} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = gopt.exp %0 : (tensor<2x3xf64>) -> tensor<2x3xf64>
  // CHECK: gopt.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<2x3xf64>) -> tensor<2xf64>
  %2 = gopt.reduce_sum %1 {axes = array<i64: 1>} : (tensor<2x3xf64>) -> tensor<2xf64>
  // CHECK: gopt.max %{{.*}}, %{{.*}} : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %3 = gopt.max %u, %u : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  // CHECK: gopt.mod %{{.*}}, %{{.*}} : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  %4 = gopt.mod %s, %s {fmod = 0 : i64} : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  // CHECK: gopt.less %{{.*}}, %{{.*}} : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %5 = gopt.less %u, %3 : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0, %2, %3, %4, %5 : tensor<2x3xf64>, tensor<2xf64>, tensor<4xui32>, tensor<4xi16>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @casts
func.func @casts(%d: tensor<3xf64>) -> (tensor<3xui64>, tensor<3xf16>, tensor<3xi16>) {
  // CHECK: gopt.cast %{{.*}} : (tensor<3xf64>) -> tensor<3xui64>
  %0 = gopt.cast %d : (tensor<3xf64>) -> tensor<3xui64>
  // CHECK: gopt.cast %{{.*}} : (tensor<3xui64>) -> tensor<3xf16>
  %1 = gopt.cast %0 : (tensor<3xui64>) -> tensor<3xf16>
  // CHECK: gopt.cast %{{.*}} : (tensor<3xf16>) -> tensor<3xi16>
  %2 = gopt.cast %1 : (tensor<3xf16>) -> tensor<3xi16>
  return %0, %1, %2 : tensor<3xui64>, tensor<3xf16>, tensor<3xi16>
}

// -----

/// bit_shift (ONNX BitShift) on unsigned integers, broadcast.
// CHECK-LABEL: func @bit_shift
func.func @bit_shift(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %c: tensor<ui64>) -> (tensor<2x3xui8>, tensor<ui64>) {
  // CHECK: gopt.bit_shift %{{.*}}, %{{.*}} {direction = "LEFT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  %0 = gopt.bit_shift %a, %b {direction = "LEFT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  // CHECK: gopt.bit_shift %{{.*}}, %{{.*}} {direction = "RIGHT"} : (tensor<ui64>, tensor<ui64>) -> tensor<ui64>
  %1 = gopt.bit_shift %c, %c {direction = "RIGHT"} : (tensor<ui64>, tensor<ui64>) -> tensor<ui64>
  return %0, %1 : tensor<2x3xui8>, tensor<ui64>
}
