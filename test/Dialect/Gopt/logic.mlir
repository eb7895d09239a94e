// RUN: gopt-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: gopt-opt %s -split-input-file -mlir-print-op-generic | gopt-opt -split-input-file | FileCheck %s

/// The ops of GoptLogicOps.td parse, print and infer their result types:
/// comparisons and predicates give i1, shapes broadcast as in numpy.

// CHECK-LABEL: func @comparisons
func.func @comparisons(%a: tensor<?x1x4xf32>, %b: tensor<3x1xf32>, %i: tensor<4xi64>, %j: tensor<i64>) -> (tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<4xi1>) {
  // CHECK: gopt.equal %{{.*}}, %{{.*}} : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %0 = gopt.equal %a, %b : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  // CHECK: gopt.less
  %1 = gopt.less %a, %b : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  // CHECK: gopt.less_equal
  %2 = gopt.less_equal %a, %b : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  // CHECK: gopt.greater %{{.*}}, %{{.*}} : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %3 = gopt.greater %a, %b : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  // CHECK: gopt.greater_equal %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
  %4 = gopt.greater_equal %i, %j : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<?x3x4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @logical
func.func @logical(%a: tensor<2x3xi1>, %b: tensor<3xi1>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>) {
  // CHECK: gopt.and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %0 = gopt.and %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: gopt.or
  %1 = gopt.or %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: gopt.xor
  %2 = gopt.xor %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: gopt.not %{{.*}} : (tensor<3xi1>) -> tensor<3xi1>
  %3 = gopt.not %b : (tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>
}

// -----

/// where broadcasts all three operands; the result has x's element type.
// CHECK-LABEL: func @where
func.func @where(%c: tensor<4x1xi1>, %x: tensor<?x1x5xbf16>, %y: tensor<bf16>) -> tensor<?x4x5xbf16> {
  // CHECK: gopt.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x1xi1>, tensor<?x1x5xbf16>, tensor<bf16>) -> tensor<?x4x5xbf16>
  %0 = gopt.where %c, %x, %y : (tensor<4x1xi1>, tensor<?x1x5xbf16>, tensor<bf16>) -> tensor<?x4x5xbf16>
  return %0 : tensor<?x4x5xbf16>
}

// -----

// CHECK-LABEL: func @division
func.func @division(%a: tensor<6xi32>, %b: tensor<i32>, %f: tensor<2x3xf32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<2x3xf32>) {
  // CHECK: gopt.mod %{{.*}}, %{{.*}} : (tensor<6xi32>, tensor<i32>) -> tensor<6xi32>
  %0 = gopt.mod %a, %b : (tensor<6xi32>, tensor<i32>) -> tensor<6xi32>
  // CHECK: gopt.floor_div
  %1 = gopt.floor_div %a, %b : (tensor<6xi32>, tensor<i32>) -> tensor<6xi32>
  // CHECK: gopt.mod %{{.*}}, %{{.*}} {fmod = 1 : i64}
  %2 = gopt.mod %f, %f {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<6xi32>, tensor<6xi32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @predicates
func.func @predicates(%x: tensor<?x8xf16>) -> (tensor<?x8xi1>, tensor<?x8xi1>) {
  // CHECK: gopt.is_nan %{{.*}} : (tensor<?x8xf16>) -> tensor<?x8xi1>
  %0 = gopt.is_nan %x : (tensor<?x8xf16>) -> tensor<?x8xi1>
  // CHECK: gopt.is_inf %{{.*}} {detect_negative = 0 : i64} : (tensor<?x8xf16>) -> tensor<?x8xi1>
  %1 = gopt.is_inf %x {detect_negative = 0 : i64} : (tensor<?x8xf16>) -> tensor<?x8xi1>
  return %0, %1 : tensor<?x8xi1>, tensor<?x8xi1>
}

// -----

/// expand broadcasts both ways; tile multiplies each dimension, a dynamic
/// one stays dynamic.
// CHECK-LABEL: func @expand_tile
func.func @expand_tile(%x: tensor<3x1xf32>, %y: tensor<?x2xi64>) -> (tensor<2x3x4xf32>, tensor<?x6xi64>) {
  // CHECK: gopt.expand %{{.*}} {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = gopt.expand %x {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: gopt.tile %{{.*}} {repeats = array<i64: 2, 3>} : (tensor<?x2xi64>) -> tensor<?x6xi64>
  %1 = gopt.tile %y {repeats = array<i64: 2, 3>} : (tensor<?x2xi64>) -> tensor<?x6xi64>
  return %0, %1 : tensor<2x3x4xf32>, tensor<?x6xi64>
}
