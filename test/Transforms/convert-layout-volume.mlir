// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NHWC | FileCheck %s
// RUN: gopt-opt %s -verify-each -gopt-convert-layout=layout=NCHW | FileCheck %s

/// The 3-D window ops have one layout (NCDHW) and no data_format: layout
/// conversion leaves them, and the elementwise ops between them, alone,
/// while the 2-D conv beside them still converts.

// CHECK-LABEL: func @main
// CHECK: gopt.conv3d %arg0, %arg1 {{.*}} -> tensor<1x6x3x4x5xf32>
// CHECK-NEXT: gopt.relu %{{.*}} : (tensor<1x6x3x4x5xf32>) -> tensor<1x6x3x4x5xf32>
// CHECK-NEXT: gopt.max_pool3d %{{.*}} -> tensor<1x6x1x2x2xf32>
// CHECK-NEXT: gopt.conv3d_transpose %{{.*}} -> tensor<1x6x2x4x4xf32>
// CHECK-NOT: gopt.transpose {{.*}}tensor<{{[0-9]+x[0-9]+x[0-9]+x[0-9]+x[0-9]+x}}f32>
// CHECK: return
func.func @main(%x: tensor<1x4x5x6x7xf32>, %w: tensor<6x4x3x3x3xf32>, %wt: tensor<6x6x2x2x2xf32>, %x2: tensor<1x8x8x3xf32>, %w2: tensor<3x3x3x8xf32>) -> (tensor<1x6x2x4x4xf32>, tensor<1x6x6x8xf32>) {
  %c = gopt.conv3d %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x4x5x6x7xf32>, tensor<6x4x3x3x3xf32>) -> tensor<1x6x3x4x5xf32>
  %r = gopt.relu %c : (tensor<1x6x3x4x5xf32>) -> tensor<1x6x3x4x5xf32>
  %m = gopt.max_pool3d %r {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x6x3x4x5xf32>) -> tensor<1x6x1x2x2xf32>
  %t = gopt.conv3d_transpose %m, %wt {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, output_padding = array<i64: 0, 0, 0>} : (tensor<1x6x1x2x2xf32>, tensor<6x6x2x2x2xf32>) -> tensor<1x6x2x4x4xf32>
  %c2 = gopt.conv2d %x2, %w2 : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  %r2 = gopt.relu %c2 : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %t, %r2 : tensor<1x6x2x4x4xf32>, tensor<1x6x6x8xf32>
}
