// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s

/// The image ops parse, print and re-parse, and infer their result shapes,
/// dynamic H and W included.

/// ConvTranspose k2 s2 as PP-OCR's detector head has it: H and W double.
// CHECK-LABEL: func @conv2d_transpose_dynamic
// CHECK: gopt.conv2d_transpose %{{.*}}, %{{.*}}, %{{.*}} {data_format = "NCHW", dilations = array<i64: 1, 1>, filter_format = "OIHW", output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x24x?x?xf32>, tensor<24x6x2x2xf32>, tensor<6xf32>) -> tensor<1x6x?x?xf32>
func.func @conv2d_transpose_dynamic(%x: tensor<1x24x?x?xf32>, %w: tensor<24x6x2x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x?x?xf32> {
  %0 = gopt.conv2d_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x24x?x?xf32>, tensor<24x6x2x2xf32>, tensor<6xf32>) -> tensor<1x6x?x?xf32>
  return %0 : tensor<1x6x?x?xf32>
}

/// (5 - 1) * 3 + (3 - 1) * 2 + 1 - 1 - 2 + 1 = 15 rows; groups 2 give
/// 2 * 4 output channels; HWIO filter [KH, KW, Cout/groups, Cin].
// CHECK-LABEL: func @conv2d_transpose_attrs
// CHECK: -> tensor<2x15x7x8xf32>
func.func @conv2d_transpose_attrs(%x: tensor<2x5x3x6xf32>, %w: tensor<3x3x4x6xf32>) -> tensor<2x15x7x8xf32> {
  %0 = gopt.conv2d_transpose %x, %w {strides = array<i64: 3, 2>, dilations = array<i64: 2, 1>, pads = array<i64: 1, 2, 0, 0>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<2x5x3x6xf32>, tensor<3x3x4x6xf32>) -> tensor<2x15x7x8xf32>
  return %0 : tensor<2x15x7x8xf32>
}

/// Scales keep a dynamic H and W dynamic.
// CHECK-LABEL: func @resize_scales_dynamic
// CHECK: gopt.resize %{{.*}} {coordinate_transformation_mode = "asymmetric", data_format = "NCHW", nearest_mode = "floor", scales = array<f32: 2.000000e+00, 2.000000e+00>} : (tensor<?x6x?x?xf32>) -> tensor<?x6x?x?xf32>
func.func @resize_scales_dynamic(%x: tensor<?x6x?x?xf32>) -> tensor<?x6x?x?xf32> {
  %0 = gopt.resize %x {scales = array<f32: 2.0, 2.0>, mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", data_format = "NCHW"} : (tensor<?x6x?x?xf32>) -> tensor<?x6x?x?xf32>
  return %0 : tensor<?x6x?x?xf32>
}

/// floor(5 * 0.6) = 3, floor(7 * 1.5) = 10 (NHWC, the default).
// CHECK-LABEL: func @resize_scales_floor
// CHECK: -> tensor<1x3x10x2xf32>
func.func @resize_scales_floor(%x: tensor<1x5x7x2xf32>) -> tensor<1x3x10x2xf32> {
  %0 = gopt.resize %x {scales = array<f32: 0.6, 1.5>, mode = "linear"} : (tensor<1x5x7x2xf32>) -> tensor<1x3x10x2xf32>
  return %0 : tensor<1x3x10x2xf32>
}

/// Sizes, with a crop.
// CHECK-LABEL: func @resize_sizes_crop
// CHECK: gopt.resize %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -5.000000e-01 : f32, data_format = "NCHW", exclude_outside = true, extrapolation_value = 1.000000e+01 : f32, mode = "cubic", roi = array<f32: 0.000000e+00, 4.000000e-01, 6.000000e-01, 1.000000e+00>, sizes = array<i64: 3, 3>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
func.func @resize_sizes_crop(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %0 = gopt.resize %x {sizes = array<i64: 3, 3>, roi = array<f32: 0.0, 0.4, 0.6, 1.0>, mode = "cubic", coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -0.5 : f32, exclude_outside = true, extrapolation_value = 10.0 : f32, data_format = "NCHW"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
