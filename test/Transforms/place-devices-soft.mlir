// RUN: gopt-opt %s -verify-each -verify-diagnostics -gopt-place-devices=allow-soft-placement=true | FileCheck %s

/// With soft placement an op pinned to a device without a kernel moves.
// CHECK-LABEL: func @soft
// CHECK: gopt.dropout %{{.*}} {device = "cpu"
func.func @soft(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): training-mode dropout is CPU-only}}
  %0 = gopt.dropout %x {device = "gpu", ratio = 0.5 : f32, training = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
