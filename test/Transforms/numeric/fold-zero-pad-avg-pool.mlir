// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %s -canonicalize -o %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: gopt-run %t.mlir --batch 3 --compare %s --atol 1e-6 --rtol 1e-6
// RUN: gopt-run %t.mlir --batch 3 --backend cpu --compare %s --compare-backend cpu --atol 1e-6 --rtol 1e-6

/// PyTorch's avg_pool2d(padding=1) export (Inception's pool branches): a
/// zero pad, then an unpadded pool. The pad becomes the pool's own padding,
/// counted in the divisor; so does an uneven pad, one in NHWC, and one
/// added to a pool's own counted padding. The results are the same.
// CHECK-LABEL: func @main
// CHECK-NOT: gopt.pad
// CHECK: gopt.avg_pool %arg0 {count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: gopt.avg_pool %arg0 {count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 0, 2, 1, 0>, strides = array<i64: 2, 2>}
// CHECK: gopt.avg_pool %arg1 {count_include_pad = true, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}
// CHECK: gopt.avg_pool %arg0 {count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 2, 1, 1, 1>}
/// Left alone: ceil_mode (its extra end is never counted), a pool that does
/// not count its own padding, channel padding, and padding as large as the
/// window.
// CHECK-COUNT-4: gopt.pad
// CHECK-NOT: gopt.pad
func.func @main(%x: tensor<?x5x7x7xf32> {gopt.name = "x"}, %xt: tensor<?x7x7x5xf32> {gopt.name = "xt"})
    -> (tensor<?x5x7x7xf32> {gopt.name = "same"}, tensor<?x5x4x3xf32> {gopt.name = "uneven"},
        tensor<?x7x7x5xf32> {gopt.name = "nhwc"}, tensor<?x5x8x7xf32> {gopt.name = "counted"},
        tensor<?x5x4x4xf32> {gopt.name = "ceil"}, tensor<?x5x9x9xf32> {gopt.name = "excluded"},
        tensor<?x7x5x5xf32> {gopt.name = "channels"}, tensor<?x5x11x9xf32> {gopt.name = "wide"}) {
  %p0 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x9x9xf32>
  %y0 = gopt.avg_pool %p0 {data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x5x9x9xf32>) -> tensor<?x5x7x7xf32>
  %p1 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 2, 1, 0>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x9x8xf32>
  %y1 = gopt.avg_pool %p1 {data_format = "NCHW", kernel = array<i64: 3, 3>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<?x5x9x8xf32>) -> tensor<?x5x4x3xf32>
  %p2 = gopt.pad %xt {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<?x7x7x5xf32>) -> tensor<?x9x9x5xf32>
  %y2 = gopt.avg_pool %p2 {data_format = "NHWC", kernel = array<i64: 3, 3>} : (tensor<?x9x9x5xf32>) -> tensor<?x7x7x5xf32>
  %p3 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 0, 0, 0>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x8x7xf32>
  %y3 = gopt.avg_pool %p3 {count_include_pad = true, data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x5x8x7xf32>) -> tensor<?x5x8x7xf32>
  %p4 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x9x9xf32>
  %y4 = gopt.avg_pool %p4 {ceil_mode = true, data_format = "NCHW", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x5x9x9xf32>) -> tensor<?x5x4x4xf32>
  %p5 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x9x9xf32>
  %y5 = gopt.avg_pool %p5 {data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x5x9x9xf32>) -> tensor<?x5x9x9xf32>
  %p6 = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : (tensor<?x5x7x7xf32>) -> tensor<?x7x7x7xf32>
  %y6 = gopt.avg_pool %p6 {data_format = "NCHW", kernel = array<i64: 3, 3>} : (tensor<?x7x7x7xf32>) -> tensor<?x7x5x5xf32>
  %p7 = gopt.pad %x {pads = array<i64: 0, 0, 0, 0, 3, 3, 1, 1>} : (tensor<?x5x7x7xf32>) -> tensor<?x5x13x9xf32>
  %y7 = gopt.avg_pool %p7 {data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 1, 1>, count_include_pad = true, strides = array<i64: 1, 1>} : (tensor<?x5x13x9xf32>) -> tensor<?x5x11x9xf32>
  return %y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7 : tensor<?x5x7x7xf32>, tensor<?x5x4x3xf32>, tensor<?x7x7x5xf32>, tensor<?x5x8x7xf32>, tensor<?x5x4x4xf32>, tensor<?x5x9x9xf32>, tensor<?x7x5x5xf32>, tensor<?x5x11x9xf32>
}
