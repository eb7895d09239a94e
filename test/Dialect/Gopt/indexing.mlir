// RUN: gopt-opt %s -split-input-file | gopt-opt | FileCheck %s

/// The indexing ops parse, print and round-trip; defaults stay implicit.

// CHECK-LABEL: func @gather
func.func @gather(%x: tensor<1000x64xf32>, %ids: tensor<?x16xi64>, %i: tensor<i32>) -> (tensor<?x16x64xf32>, tensor<1000xf32>) {
  // CHECK: gopt.gather %{{.*}}, %{{.*}} : (tensor<1000x64xf32>, tensor<?x16xi64>) -> tensor<?x16x64xf32>
  %0 = gopt.gather %x, %ids : (tensor<1000x64xf32>, tensor<?x16xi64>) -> tensor<?x16x64xf32>
  // CHECK: gopt.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<1000x64xf32>, tensor<i32>) -> tensor<1000xf32>
  %1 = gopt.gather %x, %i {axis = -1 : i64} : (tensor<1000x64xf32>, tensor<i32>) -> tensor<1000xf32>
  return %0, %1 : tensor<?x16x64xf32>, tensor<1000xf32>
}

// -----

// CHECK-LABEL: func @gather_grad
func.func @gather_grad(%x: tensor<1000x64xf32>, %ids: tensor<?x16xi64>, %dy: tensor<?x16x64xf32>) -> tensor<1000x64xf32> {
  // CHECK: gopt.gather_grad
  %0 = gopt.gather_grad %x, %ids, %dy : (tensor<1000x64xf32>, tensor<?x16xi64>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
  return %0 : tensor<1000x64xf32>
}

// -----

// CHECK-LABEL: func @gathers
func.func @gathers(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %y: tensor<2x4x6xi32>, %j: tensor<2x5x1xi32>) -> (tensor<2x2xf32>, tensor<2x5x6xi32>) {
  // CHECK: gopt.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %0 = gopt.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  // CHECK: gopt.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x4x6xi32>, tensor<2x5x1xi32>) -> tensor<2x5x6xi32>
  %1 = gopt.gather_nd %y, %j {batch_dims = 1 : i64} : (tensor<2x4x6xi32>, tensor<2x5x1xi32>) -> tensor<2x5x6xi32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x5x6xi32>
}

// -----

// CHECK-LABEL: func @scatters
func.func @scatters(%x: tensor<2x5xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>, %v: tensor<8xi64>, %j: tensor<4x1xi32>, %w: tensor<4xi64>) -> (tensor<2x5xf32>, tensor<8xi64>) {
  // CHECK: gopt.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "add"}
  %0 = gopt.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x5xf32>
  // CHECK: gopt.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xi64>, tensor<4x1xi32>, tensor<4xi64>) -> tensor<8xi64>
  %1 = gopt.scatter_nd %v, %j, %w : (tensor<8xi64>, tensor<4x1xi32>, tensor<4xi64>) -> tensor<8xi64>
  return %0, %1 : tensor<2x5xf32>, tensor<8xi64>
}

// -----

// CHECK-LABEL: func @arg_and_cumsum
func.func @arg_and_cumsum(%x: tensor<?x10xf32>, %n: tensor<3x4xi32>) -> (tensor<?xi64>, tensor<?x1xi64>, tensor<3x4xi32>) {
  // CHECK: gopt.arg_max %{{.*}} {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
  %0 = gopt.arg_max %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
  // CHECK: gopt.arg_min %{{.*}} {axis = -1 : i64, keep_dims = true, select_last_index = true} : (tensor<?x10xf32>) -> tensor<?x1xi64>
  %1 = gopt.arg_min %x {axis = -1 : i64, keep_dims = true, select_last_index = true} : (tensor<?x10xf32>) -> tensor<?x1xi64>
  // CHECK: gopt.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<3x4xi32>) -> tensor<3x4xi32>
  %2 = gopt.cumsum %n {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<3x4xi32>) -> tensor<3x4xi32>
  return %0, %1, %2 : tensor<?xi64>, tensor<?x1xi64>, tensor<3x4xi32>
}

// -----

// CHECK-LABEL: func @top_k
func.func @top_k(%x: tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>) {
  // CHECK: gopt.top_k %{{.*}} {k = 3 : i64, largest = false} : (tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
  %v, %i = gopt.top_k %x {k = 3 : i64, largest = false} : (tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
  return %v, %i : tensor<?x3xf32>, tensor<?x3xi64>
}
