// RUN: gopt-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: gopt-opt %s -split-input-file -mlir-print-op-generic | gopt-opt -split-input-file | FileCheck %s

/// gopt.all_reduce (GoptCollectiveOps.td) parses, prints and infers one
/// result per operand, of its type: a bucket may mix shapes and types.

// CHECK-LABEL: func @bucket
func.func @bucket(%a: tensor<5x5x1x32xf32>, %b: tensor<32xf32>, %c: tensor<10xf16>) -> (tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>) {
  // CHECK: gopt.all_reduce %{{.*}}, %{{.*}}, %{{.*}} {reduction = "mean"} : (tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>) -> (tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>)
  %0:3 = gopt.all_reduce %a, %b, %c {reduction = "mean"} : (tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>) -> (tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>)
  return %0#0, %0#1, %0#2 : tensor<5x5x1x32xf32>, tensor<32xf32>, tensor<10xf16>
}

// -----

/// The reduction defaults to sum.
// CHECK-LABEL: func @one
func.func @one(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: gopt.all_reduce %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
  %0 = gopt.all_reduce %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Not pure: canonicalization keeps an all_reduce whose result is unused,
/// since every replica must issue the same collectives.
// CHECK-LABEL: func @unused
func.func @unused(%a: tensor<4xf32>) {
  // CHECK: gopt.all_reduce
  %0 = gopt.all_reduce %a : (tensor<4xf32>) -> tensor<4xf32>
  return
}
