// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

/// gopt.dynamic_reshape parses, prints and re-parses; its declared result
/// type may be more static than the inferred one (all dynamic).

/// PP-OCRv4's recognizer: [N, W, 360] to [0, W, 3, 8, 15], the target
/// computed from the shape of a tensor with N and W dynamic.
// CHECK-LABEL: func @computed_target
// CHECK: gopt.dynamic_reshape %{{.*}}, %{{.*}} : (tensor<?x?x360xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
// CANON-LABEL: func @computed_target
// CANON: gopt.dynamic_reshape
func.func @computed_target(%x: tensor<?x?x360xf32>, %s: tensor<5xi64>) -> tensor<?x?x3x8x15xf32> {
  %0 = gopt.dynamic_reshape %x, %s : (tensor<?x?x360xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
  return %0 : tensor<?x?x3x8x15xf32>
}

/// The inferred type: the target's length is the rank, dimensions dynamic.
// CHECK-LABEL: func @inferred_all_dynamic
// CHECK: {allow_zero = true} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
func.func @inferred_all_dynamic(%x: tensor<4x6xf32>, %s: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %0 = gopt.dynamic_reshape %x, %s {allow_zero = true} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

/// A constant target is a gopt.reshape after canonicalization: the 0 copies
/// the static 4, the dynamic dimension takes the single -1.
// CHECK-LABEL: func @constant_target
// CANON-LABEL: func @constant_target
// CANON: gopt.reshape %{{.*}} {shape = array<i64: 4, -1, 2>} : (tensor<4x?x6xf32>) -> tensor<4x?x2xf32>
// CANON-NOT: dynamic_reshape
func.func @constant_target(%x: tensor<4x?x6xf32>) -> tensor<4x?x2xf32> {
  %s = gopt.constant dense<[0, -1, 2]> : tensor<3xi64>
  %0 = gopt.dynamic_reshape %x, %s : (tensor<4x?x6xf32>, tensor<3xi64>) -> tensor<4x?x2xf32>
  return %0 : tensor<4x?x2xf32>
}

/// Dynamic ops (Gopt_DynamicOp): the rank from ODS's rule, dimensions that
/// depend on values dynamic; the declared type may be more static.
// CHECK-LABEL: func @dynamic_ops
// CHECK: gopt.dynamic_expand %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK: gopt.dynamic_slice
// CHECK: gopt.dynamic_unsqueeze %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32>
// CHECK: gopt.dynamic_reduce_sum %{{.*}}, %{{.*}} {keep_dims = true}
// CHECK: gopt.dynamic_range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK: gopt.range {delta = 1.000000e+00 : f64, limit = 4.000000e+00 : f64, start = 0.000000e+00 : f64} : tensor<4xi64>
func.func @dynamic_ops(%x: tensor<3x1xf32>, %s: tensor<3xi64>, %a: tensor<2xi64>,
                       %b: tensor<1xi64>, %n: tensor<i64>) {
  %0 = gopt.dynamic_expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %1 = gopt.dynamic_slice %x, %b, %b, %b, %b : (tensor<3x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %2 = gopt.dynamic_unsqueeze %x, %a : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32>
  %3 = gopt.dynamic_reduce_sum %x, %b {keep_dims = true} : (tensor<3x1xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %4 = gopt.dynamic_range %n, %n, %n : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %5 = gopt.range {start = 0.0 : f64, limit = 4.0 : f64, delta = 1.0 : f64} : tensor<4xi64>
  return
}

/// With constant values, a dynamic op is its static op, formed by the same
/// adapter the runtime uses (ONNX's negative slice bound counts from the end).
// CANON-LABEL: func @dynamic_to_static
// CANON: gopt.slice %{{.*}} {ends = array<i64: 9223372036854775807, 4>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : (tensor<?x5xf32>) -> tensor<?x?xf32>
// CANON: gopt.reshape %{{.*}} {shape = array<i64: 1, 2, 5>}
// CANON: gopt.expand %{{.*}} {shape = array<i64: 2, 3>}
// CANON: gopt.reduce_sum %{{.*}} {axes = array<i64: 1>, keep_dims = true}
// CANON-NOT: gopt.dynamic_
func.func @dynamic_to_static(%x: tensor<?x5xf32>, %y: tensor<2x5xf32>, %z: tensor<3xf32>) -> (tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %one = gopt.constant dense<[1]> : tensor<1xi64>
  %neg = gopt.constant dense<[-1]> : tensor<1xi64>
  %zero = gopt.constant dense<[0]> : tensor<1xi64>
  %shape = gopt.constant dense<[2, 3]> : tensor<2xi64>
  %0 = gopt.dynamic_slice %x, %one, %neg, %one, %one : (tensor<?x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %1 = gopt.dynamic_unsqueeze %y, %zero : (tensor<2x5xf32>, tensor<1xi64>) -> tensor<?x?x?xf32>
  %2 = gopt.dynamic_expand %z, %shape : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %3 = gopt.dynamic_reduce_sum %y, %one {keep_dims = true} : (tensor<2x5xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

/// dynamic_resize: N and C kept by the declared type, H and W dynamic; the
/// inferred type is all dynamic. With constant values it is gopt.resize on H
/// and W (the adapter drops the empty roi and sizes, and N's and C's scales).
// CHECK-LABEL: func @dynamic_resize
// CHECK: gopt.dynamic_resize %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {data_format = "NCHW", mode = "linear"} : (tensor<1x3x4x4xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x3x?x?xf32>
// CHECK: gopt.dynamic_resize %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<8xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
// CANON-LABEL: func @dynamic_resize
// CANON: gopt.dynamic_resize %{{.*}} {data_format = "NCHW", mode = "linear"}
// CANON: gopt.resize %{{.*}} {data_format = "NCHW", scales = array<f32: 2.000000e+00, 5.000000e-01>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x?x?xf32>
// CANON: gopt.resize %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", data_format = "NCHW", roi = array<f32: 0.000000e+00, 2.500000e-01, 1.000000e+00, 7.500000e-01>, sizes = array<i64: 3, 5>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x5xf32>
func.func @dynamic_resize(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>, %roi: tensor<8xf32>, %z: tensor<4xi64>) -> (tensor<1x3x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x3x?x?xf32>, tensor<1x3x3x5xf32>) {
  %nof = gopt.constant dense<> : tensor<0xf32>
  %noi = gopt.constant dense<> : tensor<0xi64>
  %0 = gopt.dynamic_resize %x, %nof, %s, %noi {mode = "linear", data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x3x?x?xf32>
  %1 = gopt.dynamic_resize %x, %roi, %nof, %z {data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<8xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %scales = gopt.constant dense<[1.0, 1.0, 2.0, 0.5]> : tensor<4xf32>
  %2 = gopt.dynamic_resize %x, %nof, %scales, %noi {data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x3x?x?xf32>
  %crop = gopt.constant dense<[0.0, 0.0, 0.0, 0.25, 1.0, 1.0, 1.0, 0.75]> : tensor<8xf32>
  %sizes = gopt.constant dense<[1, 3, 3, 5]> : tensor<4xi64>
  %3 = gopt.dynamic_resize %x, %crop, %nof, %sizes {coordinate_transformation_mode = "tf_crop_and_resize", data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<8xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<1x3x3x5xf32>
  return %0, %1, %2, %3 : tensor<1x3x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x3x?x?xf32>, tensor<1x3x3x5xf32>
}

/// dynamic_resize_grad (dynamic_resize's gradient) keeps x's type; with
/// constant values it is gopt.resize_grad with the attributes the forward's
/// resize gets.
// CHECK-LABEL: func @dynamic_resize_grad
// CHECK: gopt.dynamic_resize_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {data_format = "NCHW", mode = "linear"} : (tensor<1x3x4x4xf32>, tensor<1x3x?x?xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x3x4x4xf32>
// CANON-LABEL: func @dynamic_resize_grad
// CANON: gopt.dynamic_resize_grad %{{.*}} {data_format = "NCHW", mode = "linear"}
// CANON: gopt.resize_grad %{{.*}}, %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", data_format = "NCHW", roi = array<f32: 0.000000e+00, 2.500000e-01, 1.000000e+00, 7.500000e-01>, sizes = array<i64: 3, 5>} : (tensor<1x3x4x4xf32>, tensor<1x3x3x5xf32>) -> tensor<1x3x4x4xf32>
func.func @dynamic_resize_grad(%x: tensor<1x3x4x4xf32>, %dy: tensor<1x3x?x?xf32>, %dz: tensor<1x3x3x5xf32>, %s: tensor<4xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %nof = gopt.constant dense<> : tensor<0xf32>
  %noi = gopt.constant dense<> : tensor<0xi64>
  %0 = gopt.dynamic_resize_grad %x, %dy, %nof, %s, %noi {mode = "linear", data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<1x3x?x?xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x3x4x4xf32>
  %crop = gopt.constant dense<[0.0, 0.0, 0.0, 0.25, 1.0, 1.0, 1.0, 0.75]> : tensor<8xf32>
  %sizes = gopt.constant dense<[1, 3, 3, 5]> : tensor<4xi64>
  %1 = gopt.dynamic_resize_grad %x, %dz, %crop, %nof, %sizes {coordinate_transformation_mode = "tf_crop_and_resize", data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<1x3x3x5xf32>, tensor<8xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<1x3x4x4xf32>
  return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}

/// Values the adapter refuses (a scale of N other than 1: only H and W
/// resize) keep the dynamic op; the runtime reports them naming the op.
// CANON-LABEL: func @dynamic_resize_of_batch
// CANON: gopt.dynamic_resize
// CANON-NOT: gopt.resize
func.func @dynamic_resize_of_batch(%x: tensor<1x3x4x4xf32>) -> tensor<?x?x?x?xf32> {
  %nof = gopt.constant dense<> : tensor<0xf32>
  %noi = gopt.constant dense<> : tensor<0xi64>
  %scales = gopt.constant dense<[2.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %0 = gopt.dynamic_resize %x, %nof, %scales, %noi {data_format = "NCHW"} : (tensor<1x3x4x4xf32>, tensor<0xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

/// CumSum with a run-time axis keeps x's type; a constant axis makes it
/// gopt.cumsum.
// CHECK-LABEL: func @dynamic_cumsum
// CHECK: gopt.dynamic_cumsum %{{.*}}, %{{.*}} {exclusive = true} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CANON-LABEL: func @dynamic_cumsum
// CANON: gopt.dynamic_cumsum %arg0, %arg1
// CANON: gopt.cumsum %arg0 {axis = -1 : i64, reverse = true}
func.func @dynamic_cumsum(%x: tensor<2x3xf32>, %a: tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = gopt.dynamic_cumsum %x, %a {exclusive = true} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  %last = gopt.constant dense<-1> : tensor<i64>
  %1 = gopt.dynamic_cumsum %x, %last {reverse = true} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

/// dynamic_max_unpool and dynamic_stft (frame_step fed at run time; stft's
/// result has a rank of its own, 4): with constant values they are
/// max_unpool and stft, and a negative step is a backward slice.
// CHECK-LABEL: func @unpool_and_stft
// CHECK: gopt.dynamic_max_unpool %{{.*}}, %{{.*}}, %{{.*}} {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
// CHECK: gopt.dynamic_stft %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x128x1xf32>, tensor<16xf32>, tensor<i64>) -> tensor<?x?x?x?xf32>
// CANON-LABEL: func @unpool_and_stft
// CANON: gopt.max_unpool %{{.*}}, %{{.*}} {kernel = array<i64: 2, 2>, output_shape = array<i64: 1, 1, 5, 5>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<?x?x?x?xf32>
// CANON: gopt.stft %{{.*}}, %{{.*}} {frame_step = 8 : i64} : (tensor<1x128x1xf32>, tensor<16xf32>) -> tensor<?x?x?x?xf32>
// CANON: gopt.slice %{{.*}} {ends = array<i64: -1>, starts = array<i64: 1>, steps = array<i64: -1>} : (tensor<2xi64>) -> tensor<?xi64>
// CANON-NOT: gopt.dynamic_
func.func @unpool_and_stft(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>, %s: tensor<1x128x1xf32>, %w: tensor<16xf32>, %v: tensor<2xi64>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xi64>) {
  %shape = gopt.constant dense<[1, 1, 5, 5]> : tensor<4xi64>
  %step = gopt.constant dense<8> : tensor<i64>
  %0 = gopt.dynamic_max_unpool %x, %i, %shape {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %1 = gopt.dynamic_stft %s, %w, %step : (tensor<1x128x1xf32>, tensor<16xf32>, tensor<i64>) -> tensor<?x?x?x?xf32>
  %m1 = gopt.constant dense<[-1]> : tensor<1xi64>
  %big = gopt.constant dense<[-100]> : tensor<1xi64>
  %zero = gopt.constant dense<[0]> : tensor<1xi64>
  %2 = gopt.dynamic_slice %v, %m1, %big, %zero, %m1 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  return %0, %1, %2 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xi64>
}

/// dynamic_mel_weight_matrix: five value operands, an f32 result of rank 2
/// whatever their types.
// CHECK-LABEL: func @mel_weights
// CANON-LABEL: func @mel_weights
// CANON: gopt.dynamic_mel_weight_matrix
// CHECK: gopt.dynamic_mel_weight_matrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
func.func @mel_weights(%n: tensor<i64>, %l: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<?x?xf32> {
  %0 = gopt.dynamic_mel_weight_matrix %n, %l, %r, %lo, %hi : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
