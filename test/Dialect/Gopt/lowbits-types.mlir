// RUN: gopt-opt %s -split-input-file | gopt-opt -split-input-file | FileCheck %s

/// float8 and 4-bit values: constants, casts (with `saturate`) and the data
/// movement ops take them; the IR round-trips through the printer.
// CHECK-LABEL: func @moves
// CHECK: gopt.cast %{{.*}} {saturate = false} : (tensor<2x3xf32>) -> tensor<2x3xf8E5M2>
// CHECK: gopt.transpose {{.*}} -> tensor<3x2xf8E5M2>
// CHECK: gopt.reshape {{.*}} -> tensor<6xf8E5M2>
// CHECK: gopt.flatten {{.*}} -> tensor<2x3xi4>
// CHECK: gopt.shape {{.*}} : (tensor<2x3xui4>) -> tensor<2xi64>
func.func @moves(%x: tensor<2x3xf32>) -> (tensor<6xf8E5M2>, tensor<2x3xf8E4M3FNUZ>, tensor<2x3xi4>, tensor<2xi64>) {
  %a = gopt.cast %x {saturate = false} : (tensor<2x3xf32>) -> tensor<2x3xf8E5M2>
  %t = gopt.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf8E5M2>) -> tensor<3x2xf8E5M2>
  %r = gopt.reshape %t {shape = array<i64: 6>} : (tensor<3x2xf8E5M2>) -> tensor<6xf8E5M2>
  %c = gopt.constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 240.0]]> : tensor<2x3xf8E4M3FNUZ>
  %i = gopt.identity %c : (tensor<2x3xf8E4M3FNUZ>) -> tensor<2x3xf8E4M3FNUZ>
  %w = gopt.constant dense<[[-8, 0, 7], [1, 2, 3]]> : tensor<2x3xi4>
  %f = gopt.flatten %w {axis = 1 : i64} : (tensor<2x3xi4>) -> tensor<2x3xi4>
  %u = gopt.constant dense<[[15, 0, 7], [1, 2, 3]]> : tensor<2x3xui4>
  %s = gopt.shape %u : (tensor<2x3xui4>) -> tensor<2xi64>
  return %r, %i, %f, %s : tensor<6xf8E5M2>, tensor<2x3xf8E4M3FNUZ>, tensor<2x3xi4>, tensor<2xi64>
}

// -----

/// Concat, pad and gopt.if / gopt.loop move them too.
// CHECK-LABEL: func @flow
// CHECK: gopt.concat {{.*}} -> tensor<8xf8E5M2>
// CHECK: gopt.pad {{.*}} -> tensor<10xf8E5M2>
// CHECK: gopt.if %{{.*}} captures(%{{.*}} : tensor<10xf8E5M2>) : tensor<i1> -> tensor<10xf8E5M2>
// CHECK: gopt.loop {{.*}}carried(%{{.*}} : tensor<3xi4>)
func.func @flow(%c: tensor<i1>, %n: tensor<i64>, %x: tensor<4xf8E5M2>, %w: tensor<3xi4>) -> (tensor<10xf8E5M2>, tensor<3xi4>) {
  %cat = gopt.concat %x, %x {axis = 0 : i64} : (tensor<4xf8E5M2>, tensor<4xf8E5M2>) -> tensor<8xf8E5M2>
  %p = gopt.pad %cat {pads = array<i64: 1, 1>, value = 2.0 : f32} : (tensor<8xf8E5M2>) -> tensor<10xf8E5M2>
  %y = gopt.if %c captures(%p : tensor<10xf8E5M2>) : tensor<i1> -> tensor<10xf8E5M2> then {
  ^bb0(%a: tensor<10xf8E5M2>):
    gopt.yield %a : tensor<10xf8E5M2>
  } else {
  ^bb0(%a: tensor<10xf8E5M2>):
    %i = gopt.identity %a : (tensor<10xf8E5M2>) -> tensor<10xf8E5M2>
    gopt.yield %i : tensor<10xf8E5M2>
  }
  %l = gopt.loop %n, %c carried(%w : tensor<3xi4>) : tensor<i64>, tensor<i1> -> tensor<3xi4> {
  ^bb0(%it: tensor<i64>, %ci: tensor<i1>, %v: tensor<3xi4>):
    gopt.yield %ci, %v : tensor<i1>, tensor<3xi4>
  }
  return %y, %l : tensor<10xf8E5M2>, tensor<3xi4>
}
