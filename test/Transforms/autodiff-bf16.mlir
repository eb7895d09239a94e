// RUN: gopt-opt %s -verify-each --gopt-autodiff | FileCheck %s
// RUN: gopt-opt %s --gopt-autodiff | gopt-translate --emit-plan -o %t.gplan
// RUN: gopt-run %t.gplan --batch 2 --warmup 0 --iterations 1 | FileCheck %s --check-prefix=TIMED

/// Mixed-precision training differentiates bf16 ops: the constants the
/// gradients need (global_avg_pool's 1/(H*W), reduce_mean's 1/count) are bf16
/// constants rounded from the f32 value, not four-byte floats in a bf16
/// tensor (which the plan lowering rejected: "has 4 bytes of data for 49
/// elements of 2 bytes", ResNet-18 with --train --precision bf16).
// CHECK-LABEL: func @gap_bf16
// CHECK-DAG: gopt.constant dense<2.038570e-02> : tensor<1x1x7x7xbf16>
// CHECK-DAG: gopt.constant dense<1.425780e-01> : tensor<1x1x1x7xbf16>
// CHECK: return
// TIMED: latency (ms)
func.func @gap_bf16(%x: tensor<2x3x7x7xf32>,
                    %w: tensor<3x3x1x1xf32> {gopt.name = "w", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %xc = gopt.cast %x : (tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xbf16>
  %wc = gopt.cast %w : (tensor<3x3x1x1xf32>) -> tensor<3x3x1x1xbf16>
  %c = gopt.conv2d %xc, %wc {data_format = "NCHW", filter_format = "OIHW"} : (tensor<2x3x7x7xbf16>, tensor<3x3x1x1xbf16>) -> tensor<2x3x7x7xbf16>
  %p = gopt.reduce_mean %c {axes = array<i64: 3>} : (tensor<2x3x7x7xbf16>) -> tensor<2x3x7xbf16>
  %g = gopt.global_avg_pool %c {data_format = "NCHW"} : (tensor<2x3x7x7xbf16>) -> tensor<2x3x1x1xbf16>
  %f = gopt.flatten %g {axis = 1 : i64} : (tensor<2x3x1x1xbf16>) -> tensor<2x3xbf16>
  %pf = gopt.flatten %p {axis = 1 : i64} : (tensor<2x3x7xbf16>) -> tensor<2x21xbf16>
  %m = gopt.cast %f : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  %pm = gopt.cast %pf : (tensor<2x21xbf16>) -> tensor<2x21xf32>
  %l1 = gopt.reduce_mean %m {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
  %l2 = gopt.reduce_mean %pm {axes = array<i64>} : (tensor<2x21xf32>) -> tensor<f32>
  %l = gopt.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
