// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

/// gopt.if and gopt.loop parse, print and re-parse; an if with a constant
/// condition folds to the chosen region.

// CHECK-LABEL: func @if_runtime
// CHECK: gopt.if %{{.*}} captures(%{{.*}} : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
// CHECK: gopt.relu
// CHECK: gopt.yield %{{.*}} : tensor<4xf32>
// CHECK: } else {
// CHECK: gopt.neg
// CANON-LABEL: func @if_runtime
// CANON: gopt.if
func.func @if_runtime(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = gopt.if %c captures(%x : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>):
    %r = gopt.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %r : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %n = gopt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

/// A false constant picks the else region; its ops replace the if.
// CANON-LABEL: func @if_constant
// CANON-NOT: gopt.if
// CANON-NOT: gopt.relu
// CANON: %[[N:.*]] = gopt.neg %arg0
// CANON: return %[[N]]
func.func @if_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = gopt.constant dense<false> : tensor<i1>
  %y = gopt.if %c captures(%x : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>):
    %r = gopt.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %r : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %n = gopt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    gopt.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

/// Branches that disagree on a dimension give a dynamic result.
// CHECK-LABEL: func @if_joined_shape
// CHECK: -> tensor<?xf32> then
func.func @if_joined_shape(%c: tensor<i1>, %x: tensor<4xf32>, %z: tensor<2xf32>) -> tensor<?xf32> {
  %y = gopt.if %c captures(%x, %z : tensor<4xf32>, tensor<2xf32>) : tensor<i1> -> tensor<?xf32> then {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xf32>):
    gopt.yield %a : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xf32>):
    gopt.yield %b : tensor<2xf32>
  }
  return %y : tensor<?xf32>
}

/// A loop with a carried sum and one scan output.
// CHECK-LABEL: func @loop_scan
// CHECK: gopt.loop %{{.*}}, %{{.*}} carried(%{{.*}} : tensor<3xf32>) captures(%{{.*}} : tensor<4x3xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<3xf32>, tensor<?x3xf32> {
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<4x3xf32>):
// CHECK: gopt.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<3xf32>, tensor<3xf32>
func.func @loop_scan(%n: tensor<i64>, %zero: tensor<3xf32>, %xs: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %t = gopt.constant dense<true> : tensor<i1>
  %s, %all = gopt.loop %n, %t carried(%zero : tensor<3xf32>) captures(%xs : tensor<4x3xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<3xf32>, tensor<?x3xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<3xf32>, %x: tensor<4x3xf32>):
    %row = gopt.gather %x, %i : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
    %next = gopt.add %acc, %row : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    gopt.yield %c, %next, %next : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  return %s, %all : tensor<3xf32>, tensor<?x3xf32>
}

/// A loop whose body decides when to stop: no scan outputs.
// CHECK-LABEL: func @loop_until
// CHECK: gopt.loop %{{.*}}, %{{.*}} carried(%{{.*}} : tensor<1xf32>) : tensor<i64>, tensor<i1> -> tensor<1xf32> {
func.func @loop_until(%n: tensor<i64>, %c: tensor<i1>, %v: tensor<1xf32>) -> tensor<1xf32> {
  %r = gopt.loop %n, %c carried(%v : tensor<1xf32>) : tensor<i64>, tensor<i1> -> tensor<1xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %x: tensor<1xf32>):
    %d = gopt.add %x, %x : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %limit = gopt.constant dense<1.0e2> : tensor<f32>
    %lt = gopt.less %d, %limit : (tensor<1xf32>, tensor<f32>) -> tensor<1xi1>
    %go = gopt.reshape %lt {shape = array<i64>} : (tensor<1xi1>) -> tensor<i1>
    gopt.yield %go, %d : tensor<i1>, tensor<1xf32>
  }
  return %r : tensor<1xf32>
}
