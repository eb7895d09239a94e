// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fold-constants | FileCheck %s
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-fold-constants=max-elements=2 | FileCheck %s --check-prefix=LIMIT

/// Elementwise arithmetic with broadcasting and unary math fold; the
/// operand constants die with them.
// CHECK-LABEL: func @arith
// LIMIT-LABEL: func @arith
func.func @arith() -> tensor<3xf32> {
  // CHECK-NEXT: %[[C:.*]] = gopt.constant dense<[5.000000e-01, 0.288675129, 0.223606795]> : tensor<3xf32>
  // CHECK-NEXT: return %[[C]]
  // LIMIT: gopt.rsqrt
  %a = gopt.constant dense<[1.0, 3.0, 5.0]> : tensor<3xf32>
  %b = gopt.constant dense<4.0> : tensor<f32>
  %c = gopt.mul %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %d = gopt.rsqrt %c : (tensor<3xf32>) -> tensor<3xf32>
  return %d : tensor<3xf32>
}

// -----

/// Shape computations: shape of a static tensor, slice, concat and cast.
// CHECK-LABEL: func @shape_chain
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<3xi32> {
  // CHECK-NEXT: %[[C:.*]] = gopt.constant dense<[2, 12, 1]> : tensor<3xi32>
  // CHECK-NEXT: return %[[C]]
  %s = gopt.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %n = gopt.slice %s {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<1xi64>
  %hw = gopt.slice %s {starts = array<i64: 1>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
  %p = gopt.reduce_max %hw {axes = array<i64: 0>, keep_dims = true} : (tensor<2xi64>) -> tensor<1xi64>
  %lo = gopt.reduce_min %hw {axes = array<i64: 0>, keep_dims = true} : (tensor<2xi64>) -> tensor<1xi64>
  %area = gopt.reduce_prod %hw {axes = array<i64: 0>, keep_dims = true} : (tensor<2xi64>) -> tensor<1xi64>
  %maxmin = gopt.mul %p, %lo : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  // 4 * 3 == 12: reduce_min and reduce_prod fold too.
  %same = gopt.div %maxmin, %area : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %q0 = gopt.mul %p, %p : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %q = gopt.mul %q0, %same : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %three = gopt.constant dense<12> : tensor<1xi64>
  %r = gopt.div %q, %three : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %qq = gopt.div %three, %r : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %one = gopt.div %r, %r : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %cat = gopt.concat %n, %three, %one {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %c = gopt.cast %cat : (tensor<3xi64>) -> tensor<3xi32>
  return %c : tensor<3xi32>
}

// -----

/// transpose, reshape, pad and reduce_mean of constants fold.
// CHECK-LABEL: func @data_movement
func.func @data_movement() -> (tensor<3x2xf32>, tensor<1x4xf32>, tensor<2xf32>) {
  // CHECK-DAG: gopt.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
  // CHECK-DAG: gopt.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 0.000000e+00]]> : tensor<1x4xf32>
  // CHECK-DAG: gopt.constant dense<[2.000000e+00, 5.000000e+00]> : tensor<2xf32>
  // CHECK-NOT: gopt.transpose
  // CHECK-NOT: gopt.pad
  // CHECK-NOT: gopt.reduce_mean
  %a = gopt.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = gopt.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = gopt.reshape %b {shape = array<i64: 1, 2>} : (tensor<2xf32>) -> tensor<1x2xf32>
  %p = gopt.pad %r {pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2xf32>) -> tensor<1x4xf32>
  %m = gopt.reduce_mean %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %t, %p, %m : tensor<3x2xf32>, tensor<1x4xf32>, tensor<2xf32>
}

// -----

/// Ops with a non-constant operand stay; an integer division by zero is
/// left for run time.
// CHECK-LABEL: func @not_foldable
func.func @not_foldable(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<1xi64>) {
  // CHECK: gopt.add
  // CHECK: gopt.div
  %a = gopt.constant dense<1.0> : tensor<2xf32>
  %s = gopt.add %x, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %one = gopt.constant dense<1> : tensor<1xi64>
  %zero = gopt.constant dense<0> : tensor<1xi64>
  %d = gopt.div %one, %zero : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %s, %d : tensor<2xf32>, tensor<1xi64>
}

// -----

/// Comparisons, logic, where, mod, expand and tile fold (GoptLogicOps.td):
/// a shape subgraph picking a dimension by a comparison.
// CHECK-LABEL: func @logic_chain
func.func @logic_chain(%x: tensor<2x3x4xf32>) -> (tensor<3xi64>, tensor<2x2xi64>, tensor<3xi1>) {
  // CHECK-DAG: gopt.constant dense<[1, 0, 1]> : tensor<3xi64>
  // CHECK-DAG: gopt.constant dense<{{\[}}[2, 2], [4, 4]]> : tensor<2x2xi64>
  // CHECK-DAG: gopt.constant dense<[false, true, true]> : tensor<3xi1>
  // CHECK-NOT: gopt.where
  %s = gopt.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %three = gopt.constant dense<3> : tensor<i64>
  %big = gopt.greater_equal %s, %three : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %m = gopt.mod %s, %three : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %neg = gopt.constant dense<[-2, 3, -8]> : tensor<3xi64>
  %fm = gopt.mod %neg, %three : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %pick = gopt.where %big, %m, %fm : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %col = gopt.constant dense<[[2], [4]]> : tensor<2x1xi64>
  %t = gopt.tile %col {repeats = array<i64: 1, 2>} : (tensor<2x1xi64>) -> tensor<2x2xi64>
  %nb = gopt.not %big : (tensor<3xi1>) -> tensor<3xi1>
  %x3 = gopt.xor %nb, %big : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %e = gopt.expand %x3 {shape = array<i64: 3>} : (tensor<3xi1>) -> tensor<3xi1>
  %r = gopt.and %e, %big : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %pick, %t, %r : tensor<3xi64>, tensor<2x2xi64>, tensor<3xi1>
}

// -----

/// A backward slice folds with ONNX's clamping: the start past the end reads
/// from the last element, end -1 runs down to element 0.
// CHECK-LABEL: func @backward_slice
func.func @backward_slice() -> tensor<3xi64> {
  // CHECK-NEXT: %[[C:.*]] = gopt.constant dense<[5, 3, 1]> : tensor<3xi64>
  // CHECK-NEXT: return %[[C]]
  %c = gopt.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %r = gopt.slice %c {starts = array<i64: 9>, ends = array<i64: -1>, steps = array<i64: -2>} : (tensor<6xi64>) -> tensor<3xi64>
  return %r : tensor<3xi64>
}
