// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s --gopt-fold-batch-norm -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %s --compare %t.mlir --atol 1e-5 --rtol 1e-4
// RUN: gopt-opt %s --gopt-fold-batch-norm=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

/// PP-LCNet's learnable affine blocks: a scalar multiply and add after a
/// conv (and a per-channel one after an NHWC conv without bias) fold into
/// the conv's filter and bias. A multiply by a tensor that varies along H
/// stays, and so does the depthwise conv's affine after its activation.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = gopt.conv2d %arg0, %{{.*}}, %{{.*}} {data_format = "NCHW"
// CHECK-NOT: gopt.mul %[[A]]
// CHECK: %[[B:.*]] = gopt.conv2d %arg1, %{{.*}}, %{{.*}} {pads
// CHECK-NOT: gopt.add %[[B]]
// CHECK: %[[C:.*]] = gopt.conv2d %arg0
// CHECK: gopt.mul %[[C]], %{{.*}} : (tensor<2x4x6x6xf32>, tensor<1x1x6x1xf32>)
// CHECK: %[[D:.*]] = gopt.conv2d %arg0, %{{.*}}, %{{.*}} {activation = "relu"
// CHECK: gopt.mul %[[D]]
// REPORT: remark: gopt-fold-batch-norm: folded 0 batch norms into conv2d/matmul weights, 0 remain; folded 3 constant multiplies and adds into conv2d
func.func @main(%x: tensor<2x3x6x6xf32>, %y: tensor<2x6x6x3xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x6x6x4xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %w = gopt.constant dense<[[[[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, 0.8, 0.9]], [[0.2, 0.1, 0.0], [-0.1, -0.2, 0.3], [0.5, 0.4, 0.3]], [[0.9, -0.8, 0.7], [0.6, 0.5, 0.4], [-0.3, 0.2, 0.1]]], [[[0.3, 0.2, 0.1], [0.0, -0.1, -0.2], [0.3, 0.4, 0.5]], [[0.6, 0.7, -0.8], [0.9, 0.1, 0.2], [0.3, 0.4, 0.5]], [[-0.6, 0.7, 0.8], [0.9, 0.8, 0.7], [0.6, 0.5, 0.4]]], [[[0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.5, 0.5, 0.5]], [[0.1, 0.1, 0.1], [0.2, 0.2, -0.2], [0.3, 0.3, 0.3]], [[-0.4, 0.4, 0.4], [0.5, 0.5, 0.5], [0.6, 0.6, 0.6]]], [[[0.7, 0.6, 0.5], [0.4, -0.3, 0.2], [0.1, 0.0, 0.1]], [[0.2, 0.3, 0.4], [0.5, 0.6, -0.7], [0.8, 0.9, 0.1]], [[0.2, -0.3, 0.4], [0.5, 0.6, 0.7], [0.8, 0.9, 0.1]]]]> : tensor<4x3x3x3xf32>
  %b = gopt.constant dense<[0.1, -0.2, 0.3, 0.05]> : tensor<4xf32>
  %scale = gopt.constant dense<1.25> : tensor<1xf32>
  %shift = gopt.constant dense<-0.5> : tensor<1xf32>
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %m = gopt.mul %c, %scale : (tensor<2x4x6x6xf32>, tensor<1xf32>) -> tensor<2x4x6x6xf32>
  %lab = gopt.add %shift, %m : (tensor<1xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>

  %whwio = gopt.constant dense<0.25> : tensor<3x3x3x4xf32>
  %perc = gopt.constant dense<[1.0, -2.0, 0.5, 3.0]> : tensor<4xf32>
  %c2 = gopt.conv2d %y, %whwio {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  %a2 = gopt.add %c2, %perc : (tensor<2x6x6x4xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>

  %alongh = gopt.constant dense<[[[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]]]]> : tensor<1x1x6x1xf32>
  %c3 = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %m3 = gopt.mul %c3, %alongh : (tensor<2x4x6x6xf32>, tensor<1x1x6x1xf32>) -> tensor<2x4x6x6xf32>

  %c4 = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 1, 1, 1, 1>, activation = "relu"} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %m4 = gopt.mul %c4, %scale : (tensor<2x4x6x6xf32>, tensor<1xf32>) -> tensor<2x4x6x6xf32>
  return %lab, %a2, %m3, %m4 : tensor<2x4x6x6xf32>, tensor<2x6x6x4xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}
