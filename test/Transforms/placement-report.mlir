// RUN: gopt-opt %s -split-input-file -verify-each -verify-diagnostics -gopt-placement-report -o /dev/null
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-place-devices=report=true -o /dev/null 2>&1 | FileCheck %s

/// A GPU graph with a CPU island: naively x and the returned value cross at
/// the boundary, the dropout's input once and its result once per GPU user
/// (2); placed, the two uses share one transfer.
// expected-remark @below {{gopt-placement-report: 3 ops on gpu, 1 on cpu; transfers naive 5 (3 interior, 2 boundary; 0 bytes + 1280 bytes per sample), placed 4 (2 interior, 2 boundary; 0 bytes + 1024 bytes per sample)}}
func.func @island(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-remark @below {{placed on gpu: default device}}
  %0 = gopt.relu %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{placed on cpu: training-mode dropout is CPU-only}}
  %1 = gopt.dropout %0 {ratio = 0.5 : f32, training = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{placed on gpu: default device}}
  %2 = gopt.tanh %1 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{placed on gpu: default device}}
  %3 = gopt.add %2, %1 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %3 : tensor<?x64xf32>
}

// -----

/// A chain of shape ops next to the host: naively x crosses for the relu and
/// the shape, and both results come back (4, all at the boundary); placed,
/// the chain runs on the host and only x and the relu's result cross (2).
// expected-remark @below {{gopt-placement-report: 1 ops on gpu, 3 on cpu; transfers naive 4 (0 interior, 4 boundary; 4 bytes + 768 bytes per sample), placed 2 (0 interior, 2 boundary; 0 bytes + 512 bytes per sample)}}
func.func @shape_chain(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<1xi32>) {
  // expected-remark @below {{placed on gpu: default device}}
  %0 = gopt.relu %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{placed on cpu: grouped with host ops (transfers around it 2 -> 1)}}
  %1 = gopt.shape %x : (tensor<?x64xf32>) -> tensor<2xi64>
  // expected-remark @below {{placed on cpu: grouped with host ops (transfers around it 1 -> 1)}}
  %2 = gopt.slice %1 {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  // expected-remark @below {{placed on cpu: grouped with host ops (transfers around it 1 -> 1)}}
  %3 = gopt.cast %2 : (tensor<1xi64>) -> tensor<1xi32>
  return %0, %3 : tensor<?x64xf32>, tensor<1xi32>
}

// -----

/// Everything on the CPU: no transfers either way.
// CHECK: remark: gopt-placement-report: 0 ops on gpu, 2 on cpu; transfers naive 0 (0 interior, 0 boundary; 0 bytes), placed 0 (0 interior, 0 boundary; 0 bytes)
// expected-remark @below {{gopt-placement-report: 0 ops on gpu, 2 on cpu; transfers naive 0 (0 interior, 0 boundary; 0 bytes), placed 0 (0 interior, 0 boundary; 0 bytes)}}
func.func @all_cpu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{placed on cpu: pinned by the graph}}
  %0 = gopt.relu %x {device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{placed on cpu: pinned by the graph}}
  %1 = gopt.neg %0 {device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
