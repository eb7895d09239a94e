// RUN: gopt-opt %s -split-input-file -verify-each -verify-diagnostics -gopt-place-devices | FileCheck %s
// RUN: not gopt-opt %s -split-input-file -verify-each -gopt-place-devices=default=cpu 2>&1 | FileCheck %s --check-prefix=CPU

/// A GPU graph with a CPU island (training dropout has no CUDA kernel):
/// arguments arrive on the host, so %x goes to the GPU once; the dropout's
/// input comes back once; its result goes to the GPU once although two ops
/// use it (merged); the result returns to the host.
// CHECK-LABEL: func @island
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>)
// CHECK-NEXT: %[[XD:.*]] = gopt.transfer %[[X]] {from = "cpu", to = "gpu"}
// CHECK-NEXT: %[[R:.*]] = gopt.relu %[[XD]] {device = "gpu"}
// CHECK-NEXT: %[[RH:.*]] = gopt.transfer %[[R]] {from = "gpu", to = "cpu"}
// CHECK-NEXT: %[[D:.*]] = gopt.dropout %[[RH]] {device = "cpu"
// CHECK-NEXT: %[[DD:.*]] = gopt.transfer %[[D]] {from = "cpu", to = "gpu"}
// CHECK-NEXT: %[[T:.*]] = gopt.tanh %[[DD]] {device = "gpu"}
// CHECK-NEXT: %[[A:.*]] = gopt.add %[[T]], %[[DD]] {device = "gpu"}
// CHECK-NEXT: %[[AH:.*]] = gopt.transfer %[[A]] {from = "gpu", to = "cpu"}
// CHECK-NEXT: return %[[AH]]
// CPU-LABEL: func @island
// CPU-NOT: gopt.transfer
// CPU-NOT: device = "gpu"
// CPU: return
func.func @island(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = gopt.relu %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{placed on cpu: training-mode dropout is CPU-only}}
  %1 = gopt.dropout %0 {ratio = 0.5 : f32, training = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = gopt.tanh %1 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %3 = gopt.add %2, %1 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %3 : tensor<?x64xf32>
}

// -----

/// A small op between two host ops joins them on the host (2 transfers
/// saved); large ops stay on the GPU.
// CHECK-LABEL: func @group_small_op
// CHECK: gopt.relu %{{.*}} {device = "gpu"}
// CHECK: gopt.reduce_mean %{{.*}} {axes = array<i64: 0>, device = "gpu"}
// CHECK: gopt.transfer %{{.*}} {from = "gpu", to = "cpu"}
// CHECK: gopt.dropout %{{.*}} {device = "cpu"
// CHECK-NEXT: gopt.neg %{{.*}} {device = "cpu"}
// CHECK-NEXT: gopt.dropout %{{.*}} {device = "cpu"
// CHECK-NOT: gopt.transfer
// CHECK: return
func.func @group_small_op(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %0 = gopt.relu %x : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %1 = gopt.reduce_mean %0 {axes = array<i64: 0>} : (tensor<64x128xf32>) -> tensor<128xf32>
  // expected-remark @below {{training-mode dropout is CPU-only}}
  %2 = gopt.dropout %1 {ratio = 0.5 : f32, training = true} : (tensor<128xf32>) -> tensor<128xf32>
  // expected-remark @below {{placed on cpu: grouped with host ops (transfers around it 2 -> 0)}}
  %3 = gopt.neg %2 : (tensor<128xf32>) -> tensor<128xf32>
  // expected-remark @below {{training-mode dropout is CPU-only}}
  %4 = gopt.dropout %3 {ratio = 0.5 : f32, training = true} : (tensor<128xf32>) -> tensor<128xf32>
  return %4 : tensor<128xf32>
}

// -----

/// A chain of shape ops ending in a result follows its host end; only %x
/// crosses (once, for the relu).
// CHECK-LABEL: func @shape_chain
// CHECK-NEXT: %[[XD:.*]] = gopt.transfer %{{.*}} {from = "cpu", to = "gpu"}
// CHECK-NEXT: gopt.relu %[[XD]] {device = "gpu"}
// CHECK-NEXT: gopt.transfer %{{.*}} {from = "gpu", to = "cpu"}
// CHECK-NEXT: gopt.shape %{{.*}} {device = "cpu"}
// CHECK-NEXT: gopt.slice %{{.*}} {device = "cpu"
// CHECK-NEXT: gopt.cast %{{.*}} {device = "cpu"}
// CHECK-NEXT: return
func.func @shape_chain(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<1xi32>) {
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

/// Constants are never transferred: one used on both devices is duplicated.
// CHECK-LABEL: func @constant_per_device
// CHECK-DAG: %[[CC:.*]] = gopt.constant {device = "cpu"
// CHECK-DAG: %[[CG:.*]] = gopt.constant {device = "gpu"
// CHECK: gopt.add %{{.*}}, %[[CG]] {device = "gpu"}
// CHECK: gopt.dropout
// CHECK: gopt.mul %{{.*}}, %[[CC]] {device = "cpu"}
func.func @constant_per_device(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c = gopt.constant dense<2.0> : tensor<64xf32>
  %0 = gopt.add %x, %c : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{training-mode dropout is CPU-only}}
  %1 = gopt.dropout %0 {ratio = 0.5 : f32, training = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = gopt.mul %1, %c {device = "cpu"} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %2 : tensor<?x64xf32>
}

// -----

/// A pinned device is kept when it has a kernel.
// CHECK-LABEL: func @pinned
// CHECK: gopt.relu %{{.*}} {device = "cpu"}
// CHECK: gopt.tanh %{{.*}} {device = "gpu"}
func.func @pinned(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = gopt.relu %x {device = "cpu"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = gopt.tanh %0 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}

// -----

/// Pinned to a device without a kernel: an error without soft placement.
func.func @pinned_without_kernel(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @below {{is pinned to gpu, which cannot run it: training-mode dropout is CPU-only; pass allow-soft-placement=true to move it}}
  %0 = gopt.dropout %x {device = "gpu", ratio = 0.5 : f32, training = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
