// RUN: gopt-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: gopt-opt %s -split-input-file -mlir-print-op-generic | gopt-opt -split-input-file | FileCheck %s

/// The ops of GoptDataDependentOps.td parse, print and infer their result
/// types: the dimensions their data decides are dynamic.

// CHECK-LABEL: func @non_zero
func.func @non_zero(%x: tensor<2x3xf32>, %b: tensor<?xi1>) -> (tensor<2x?xi64>, tensor<1x?xi64>) {
  // CHECK: gopt.non_zero %{{.*}} : (tensor<2x3xf32>) -> tensor<2x?xi64>
  %0 = gopt.non_zero %x : (tensor<2x3xf32>) -> tensor<2x?xi64>
  // CHECK: gopt.non_zero %{{.*}} : (tensor<?xi1>) -> tensor<1x?xi64>
  %1 = gopt.non_zero %b : (tensor<?xi1>) -> tensor<1x?xi64>
  return %0, %1 : tensor<2x?xi64>, tensor<1x?xi64>
}

// -----

// CHECK-LABEL: func @compress
func.func @compress(%x: tensor<3x4xf32>, %c: tensor<2xi1>) -> (tensor<3x?xf32>, tensor<?xf32>) {
  // CHECK: gopt.compress %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<3x4xf32>, tensor<2xi1>) -> tensor<3x?xf32>
  %0 = gopt.compress %x, %c {axis = -1 : i64} : (tensor<3x4xf32>, tensor<2xi1>) -> tensor<3x?xf32>
  // CHECK: gopt.compress %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<2xi1>) -> tensor<?xf32>
  %1 = gopt.compress %x, %c : (tensor<3x4xf32>, tensor<2xi1>) -> tensor<?xf32>
  return %0, %1 : tensor<3x?xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func @unique
func.func @unique(%x: tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>, tensor<?xi32>) {
  // CHECK: gopt.unique %{{.*}} {axis = 1 : i64, sorted = false} : (tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  %y, %i, %v, %c = gopt.unique %x {axis = 1 : i64, sorted = false} : (tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  // CHECK: gopt.unique %{{.*}} : (tensor<3x4xi32>) -> (tensor<?xi32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)
  %f:4 = gopt.unique %x : (tensor<3x4xi32>) -> (tensor<?xi32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)
  return %y, %i, %v, %c, %f#0 : tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>, tensor<?xi32>
}

// -----

// CHECK-LABEL: func @non_max_suppression
func.func @non_max_suppression(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %m: tensor<1xi64>, %iou: tensor<f32>, %t: tensor<1xf32>) -> tensor<?x3xi64> {
  // CHECK: gopt.non_max_suppression %{{.*}} {center_point_box = 1 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<f32>, tensor<1xf32>) -> tensor<?x3xi64>
  %0 = gopt.non_max_suppression %b, %s, %m, %iou, %t {center_point_box = 1 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<f32>, tensor<1xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// CHECK-LABEL: func @image_decoder
func.func @image_decoder(%s: tensor<?xui8>) -> (tensor<?x?x3xui8>, tensor<?x?x1xui8>) {
  // CHECK: gopt.image_decoder %{{.*}} : (tensor<?xui8>) -> tensor<?x?x3xui8>
  %0 = gopt.image_decoder %s : (tensor<?xui8>) -> tensor<?x?x3xui8>
  // CHECK: gopt.image_decoder %{{.*}} {pixel_format = "Grayscale"} : (tensor<?xui8>) -> tensor<?x?x1xui8>
  %1 = gopt.image_decoder %s {pixel_format = "Grayscale"} : (tensor<?xui8>) -> tensor<?x?x1xui8>
  return %0, %1 : tensor<?x?x3xui8>, tensor<?x?x1xui8>
}
