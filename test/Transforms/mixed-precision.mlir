// RUN: gopt-opt %s -split-input-file -verify-each --gopt-mixed-precision | FileCheck %s
// RUN: gopt-opt %s -split-input-file --gopt-mixed-precision=type=f16 | FileCheck %s --check-prefix=F16
// RUN: gopt-opt %s -split-input-file --gopt-mixed-precision=deny=add | FileCheck %s --check-prefix=DENY
// RUN: gopt-opt %s -split-input-file --gopt-mixed-precision=report=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not gopt-opt %s -split-input-file --gopt-mixed-precision=type=f64 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not gopt-opt %s -split-input-file --gopt-mixed-precision=deny=softmaxx -o /dev/null 2>&1 | FileCheck %s --check-prefix=KIND

// TYPE: error: gopt-mixed-precision: unknown type 'f64' (expected bf16 or f16)
// KIND: error: gopt-mixed-precision: deny= names 'softmaxx', which is not a gopt op kind (e.g. add, relu)

/// conv2d (allow) and relu (clear) run in bf16: one cast in, the weights
/// converted to bf16 constants (no cast), one cast out before softmax
/// (deny), whose f32 result is the function's.
// CHECK-LABEL: func @conv_relu_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x3xf32>) -> tensor<1x18xf32>
// CHECK-DAG: %[[W:.*]] = gopt.constant dense<{{.*}}> : tensor<2x2x1x1xbf16>
// CHECK-DAG: %[[B:.*]] = gopt.constant dense<[1.000980e-01, 2.001950e-01]> : tensor<2xbf16>
// CHECK-DAG: %[[XL:.*]] = gopt.cast %[[X]] : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xbf16>
// CHECK: %[[C:.*]] = gopt.conv2d %[[XL]], %[[W]], %[[B]] {{.*}} -> tensor<1x2x3x3xbf16>
// CHECK: %[[R:.*]] = gopt.relu %[[C]] : (tensor<1x2x3x3xbf16>) -> tensor<1x2x3x3xbf16>
// CHECK: %[[F:.*]] = gopt.flatten %[[R]] {{.*}} -> tensor<1x18xbf16>
// CHECK: %[[FF:.*]] = gopt.cast %[[F]] : (tensor<1x18xbf16>) -> tensor<1x18xf32>
// CHECK: %[[S:.*]] = gopt.softmax %[[FF]] {{.*}} -> tensor<1x18xf32>
// CHECK: return %[[S]]
// CHECK-NOT: tensor<{{.*}}xf32>}>
// F16-LABEL: func @conv_relu_softmax
// F16: gopt.cast {{.*}} -> tensor<1x2x3x3xf16>
// F16: gopt.conv2d {{.*}} -> tensor<1x2x3x3xf16>
// REPORT: remark: gopt-mixed-precision: kept softmax in f32: it is on the deny list (needs f32 range or accumulation)
// REPORT: remark: gopt-mixed-precision: 3 ops in bf16, 2 casts inserted, 2 constants converted
func.func @conv_relu_softmax(%x: tensor<1x2x3x3xf32>) -> tensor<1x18xf32> {
  %w = gopt.constant dense<[[[[0.5]], [[-1.0]]], [[[0.25]], [[2.0]]]]> : tensor<2x2x1x1xf32>
  %b = gopt.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r = gopt.relu %c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %f = gopt.flatten %r {axis = 1 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x18xf32>
  %s = gopt.softmax %f {axis = 1 : i64} : (tensor<1x18xf32>) -> tensor<1x18xf32>
  return %s : tensor<1x18xf32>
}

// -----

/// A residual block: the add (infer) takes two bf16 operands, so the whole
/// block is bf16; the input is cast once although two convs read it, and
/// the result once at the return.
// CHECK-LABEL: func @residual
// CHECK-COUNT-1: gopt.cast %arg0 : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xbf16>
// CHECK: gopt.conv2d {{.*}} -> tensor<1x4x5x5xbf16>
// CHECK: gopt.conv2d {{.*}} -> tensor<1x4x5x5xbf16>
// CHECK: %[[A:.*]] = gopt.add {{.*}} : (tensor<1x4x5x5xbf16>, tensor<1x4x5x5xbf16>) -> tensor<1x4x5x5xbf16>
// CHECK: %[[R:.*]] = gopt.relu %[[A]]
// CHECK: %[[O:.*]] = gopt.cast %[[R]] : (tensor<1x4x5x5xbf16>) -> tensor<1x4x5x5xf32>
// CHECK: return %[[O]]
// DENY-LABEL: func @residual
// DENY: %[[C1:.*]] = gopt.conv2d {{.*}} -> tensor<1x4x5x5xbf16>
// DENY: %[[C1F:.*]] = gopt.cast %[[C1]] : (tensor<1x4x5x5xbf16>) -> tensor<1x4x5x5xf32>
// DENY: %[[C2:.*]] = gopt.conv2d {{.*}} -> tensor<1x4x5x5xbf16>
// DENY: %[[C2F:.*]] = gopt.cast %[[C2]] : (tensor<1x4x5x5xbf16>) -> tensor<1x4x5x5xf32>
// DENY: gopt.add %[[C1F]], %[[C2F]] : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
// DENY: gopt.relu {{.*}} -> tensor<1x4x5x5xf32>
// REPORT: remark: gopt-mixed-precision: 4 ops in bf16, 2 casts inserted, 2 constants converted
func.func @residual(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = gopt.constant dense<0.5> : tensor<4x4x3x3xf32>
  %c1 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW", padding = "SAME"} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %w2 = gopt.constant dense<0.25> : tensor<4x4x1x1xf32>
  %c2 = gopt.conv2d %x, %w2 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %a = gopt.add %c1, %c2 : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %r = gopt.relu %a : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  return %r : tensor<1x4x5x5xf32>
}

// -----

/// Deny propagation: the add (infer) after exp (deny) stays f32 although its
/// other operand is a constant, and so does the relu after it; the matmul
/// (allow) then casts its operand. The argument is cast once for the
/// matmul while exp keeps reading it in f32.
// CHECK-LABEL: func @after_deny
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>
// CHECK-DAG: %[[XL:.*]] = gopt.cast %[[X]] : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK-DAG: %[[E:.*]] = gopt.exp %[[X]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[A:.*]] = gopt.add %[[E]], {{.*}} -> tensor<2x4xf32>
// CHECK: %[[R:.*]] = gopt.relu %[[A]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[RL:.*]] = gopt.cast %[[R]] : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK: gopt.matmul %[[RL]], %[[XL]] {{.*}} -> tensor<2x2xbf16>
// REPORT: remark: gopt-mixed-precision: kept relu in f32 (clear list): an operand comes from an f32 op
// REPORT: remark: gopt-mixed-precision: 1 op in bf16, 3 casts inserted, 0 constants converted
func.func @after_deny(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %one = gopt.constant dense<1.0> : tensor<4xf32>
  %e = gopt.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = gopt.add %e, %one : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = gopt.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = gopt.matmul %r, %x {transpose_b = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

// -----

/// Ops already in low precision, integer ops and training batch norm are
/// left alone; a graph without allow-listed ops is unchanged.
// CHECK-LABEL: func @untouched
// CHECK-NOT: gopt.cast
// CHECK: gopt.add {{.*}} -> tensor<4xbf16>
// CHECK: gopt.batch_norm {{.*}}{training = true} : (tensor<2x3xf32>, tensor<3xf32>,
// CHECK: return {{.*}} : tensor<4xbf16>, tensor<4xi32>, tensor<2x3xf32>
// REPORT-NOT: remark: gopt-mixed-precision: {{.*}} ops in bf16
func.func @untouched(%a: tensor<4xbf16>, %i: tensor<4xi32>, %x: tensor<2x3xf32>, %s: tensor<3xf32>) -> (tensor<4xbf16>, tensor<4xi32>, tensor<2x3xf32>) {
  %b = gopt.add %a, %a : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %j = gopt.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %y, %m, %v, %rm, %rv = gopt.batch_norm %x, %s, %s, %s, %s {training = true} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %b, %j, %y : tensor<4xbf16>, tensor<4xi32>, tensor<2x3xf32>
}

// -----

/// Large weights are stored as bf16 bit patterns (two bytes each).
// CHECK-LABEL: func @large_weight
// CHECK: gopt.constant dense_resource<gopt_folded> : tensor<8x8xbf16>
// CHECK: gopt.matmul {{.*}} : (tensor<?x8xbf16>, tensor<8x8xbf16>) -> tensor<?x8xbf16>
func.func @large_weight(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = gopt.constant dense<[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0]]> : tensor<8x8xf32>
  %m = gopt.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}

// -----

/// Two functions in one module: each is converted, and the report counts
/// each function's own casts.
// CHECK-LABEL: func @first
// CHECK: gopt.matmul {{.*}} -> tensor<2x2xbf16>
// CHECK-LABEL: func @second
// CHECK: gopt.matmul {{.*}} -> tensor<2x2xbf16>
// REPORT: remark: gopt-mixed-precision: 1 op in bf16, 3 casts inserted, 0 constants converted
// REPORT: remark: gopt-mixed-precision: 1 op in bf16, 3 casts inserted, 0 constants converted
func.func @first(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = gopt.matmul %x, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
func.func @second(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %m = gopt.matmul %x, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
