// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fold-constants | FileCheck %s

/// Unsigned constants fold with their unsigned values: 200 + 100 wraps to
/// 44 in ui8, 255 compares greater than 1, and casts zero-extend.
// CHECK-LABEL: func @unsigned
func.func @unsigned() -> (tensor<2xui8>, tensor<2xi1>, tensor<2xi32>) {
  // CHECK-DAG: gopt.constant dense<[44, 0]> : tensor<2xui8>
  // CHECK-DAG: gopt.constant dense<[false, true]> : tensor<2xi1>
  // CHECK-DAG: gopt.constant dense<[100, 255]> : tensor<2xi32>
  %a = gopt.constant dense<[200, 1]> : tensor<2xui8>
  %b = gopt.constant dense<[100, 255]> : tensor<2xui8>
  %sum = gopt.add %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %gt = gopt.greater %b, %a : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>
  %wide = gopt.cast %b : (tensor<2xui8>) -> tensor<2xi32>
  return %sum, %gt, %wide : tensor<2xui8>, tensor<2xi1>, tensor<2xi32>
}

// -----

/// f64 folds in double: 1 + 1e-12 keeps its last digits.
// CHECK-LABEL: func @f64
func.func @f64() -> tensor<f64> {
  // CHECK: gopt.constant dense<1.0000000000010001> : tensor<f64>
  %a = gopt.constant dense<1.0> : tensor<f64>
  %b = gopt.constant dense<1.0e-12> : tensor<f64>
  %c = gopt.add %a, %b : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %c : tensor<f64>
}

// -----

/// ui64 values beyond int64 stay for the runtime, as do float-to-integer
/// casts out of the target's range (the runtime saturates them).
// CHECK-LABEL: func @left_to_runtime
func.func @left_to_runtime() -> (tensor<ui64>, tensor<ui8>) {
  // CHECK: gopt.add
  // CHECK: gopt.cast
  %a = gopt.constant dense<18446744073709551615> : tensor<ui64>
  %b = gopt.add %a, %a : (tensor<ui64>, tensor<ui64>) -> tensor<ui64>
  %f = gopt.constant dense<-3.0> : tensor<f32>
  %u = gopt.cast %f : (tensor<f32>) -> tensor<ui8>
  return %b, %u : tensor<ui64>, tensor<ui8>
}
