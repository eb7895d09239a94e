// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

/// gopt.dynamic_reshape parses, prints and re-parses; its declared result
/// type may be more static than the inferred one (all dynamic).

/// PP-OCRv4's recognizer: [N, W, 360] to [0, W, 3, 8, 15], the target
/// computed from the shape of a tensor with N and W dynamic.
// CHECK-LABEL: func @computed_target
// CHECK: gopt.dynamic_reshape %{{.*}}, %{{.*}} : (tensor<?x?x360xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
// CANON-LABEL: func @computed_target
// CANON: gopt.dynamic_reshape
func.func @computed_target(%x: tensor<?x?x360xf32>, %s: tensor<5xi64>) -> tensor<?x?x3x8x15xf32> {
  %0 = gopt.dynamic_reshape %x, %s : (tensor<?x?x360xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
  return %0 : tensor<?x?x3x8x15xf32>
}

/// The inferred type: the target's length is the rank, dimensions dynamic.
// CHECK-LABEL: func @inferred_all_dynamic
// CHECK: {allow_zero = true} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
func.func @inferred_all_dynamic(%x: tensor<4x6xf32>, %s: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %0 = gopt.dynamic_reshape %x, %s {allow_zero = true} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

/// A constant target is a gopt.reshape after canonicalization: the 0 copies
/// the static 4, the dynamic dimension takes the single -1.
// CHECK-LABEL: func @constant_target
// CANON-LABEL: func @constant_target
// CANON: gopt.reshape %{{.*}} {shape = array<i64: 4, -1, 2>} : (tensor<4x?x6xf32>) -> tensor<4x?x2xf32>
// CANON-NOT: dynamic_reshape
func.func @constant_target(%x: tensor<4x?x6xf32>) -> tensor<4x?x2xf32> {
  %s = gopt.constant dense<[0, -1, 2]> : tensor<3xi64>
  %0 = gopt.dynamic_reshape %x, %s : (tensor<4x?x6xf32>, tensor<3xi64>) -> tensor<4x?x2xf32>
  return %0 : tensor<4x?x2xf32>
}
