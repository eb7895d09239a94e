// RUN: gopt-opt %s -split-input-file -verify-each --gopt-quantize-weights=min-elements=1 | FileCheck %s --implicit-check-not='gopt.constant {{.*}} : tensor<{{[0-9x]+}}x{{[0-9]+}}xf32>'
// RUN: gopt-opt %s -split-input-file --gopt-quantize-weights='min-elements=1 granularity=per-tensor' | FileCheck %s --check-prefix=TENSOR
// RUN: gopt-opt %s -split-input-file --gopt-quantize-weights=report=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: gopt-opt %s -split-input-file --gopt-quantize-weights=min-elements=1 --gopt-fold-constants --canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: not gopt-opt %s -split-input-file --gopt-quantize-weights=bits=4 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not gopt-opt %s -split-input-file --gopt-quantize-weights=granularity=per-row -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRAN

// BITS: error: gopt-quantize-weights: bits=4 is not supported (only 8-bit weights, bits=8)
// GRAN: error: gopt-quantize-weights: unknown granularity 'per-row' (expected per-channel or per-tensor)

/// OIHW filter: one scale per output channel (axis 0), max|w| / 127; the
/// all-zero channel gets scale 1. The bias stays f32. 63.5 / 0.5 = 127,
/// -10 / 0.5 = -20.
// CHECK-LABEL: func @conv_oihw
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x3xf32>)
// CHECK-DAG: %[[Q:.*]] = gopt.constant dense<{{\[\[\[\[}}127]], {{\[\[}}-20]]], {{\[\[\[}}0]], {{\[\[}}0]]]]> : tensor<2x2x1x1xi8>
// CHECK-DAG: %[[S:.*]] = gopt.constant dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = gopt.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[W:.*]] = gopt.dequantize %[[Q]], %[[S]] : (tensor<2x2x1x1xi8>, tensor<2xf32>) -> tensor<2x2x1x1xf32>
// CHECK: gopt.conv2d %[[X]], %[[W]], %[[B]]
// TENSOR-LABEL: func @conv_oihw
// TENSOR: gopt.constant dense<{{\[\[\[\[}}127]], {{\[\[}}-20]]], {{\[\[\[}}0]], {{\[\[}}0]]]]> : tensor<2x2x1x1xi8>
// TENSOR: gopt.constant dense<5.000000e-01> : tensor<1xf32>
// TENSOR: gopt.dequantize {{.*}} : (tensor<2x2x1x1xi8>, tensor<1xf32>) -> tensor<2x2x1x1xf32>
// DEFAULT: remark: gopt-quantize-weights: quantized 0 weights to int8 (0 B -> 0 B), left 1 below min-elements
// FOLD-LABEL: func @conv_oihw
// FOLD: gopt.dequantize
// FOLD: gopt.conv2d
func.func @conv_oihw(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = gopt.constant dense<[[[[63.5]], [[-10.0]]], [[[0.0]], [[0.0]]]]> : tensor<2x2x1x1xf32>
  %b = gopt.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %y = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

/// HWIO filter: output channels are axis 3. Per tensor, the one scale is
/// 127 / 127 = 1 and 3.0 stays 3.
// CHECK-LABEL: func @conv_hwio
// CHECK-DAG: %[[Q:.*]] = gopt.constant dense<{{\[\[\[}}[127, 0, -127], [12, 0, 64]]]]> : tensor<1x1x2x3xi8>
// CHECK-DAG: %[[S:.*]] = gopt.constant dense<[2.500000e-01, 1.000000e+00, 1.000000e+00]> : tensor<3xf32>
// CHECK: gopt.dequantize %[[Q]], %[[S]] {axis = 3 : i64} : (tensor<1x1x2x3xi8>, tensor<3xf32>) -> tensor<1x1x2x3xf32>
// TENSOR-LABEL: func @conv_hwio
// TENSOR: gopt.constant dense<{{\[\[\[}}[32, 0, -127], [3, 0, 64]]]]> : tensor<1x1x2x3xi8>
// TENSOR: gopt.constant dense<1.000000e+00> : tensor<1xf32>
// DEFAULT: remark: gopt-quantize-weights: quantized 0 weights to int8 (0 B -> 0 B), left 1 below min-elements
func.func @conv_hwio(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x3xf32> {
  %w = gopt.constant dense<[[[[31.75, 0.0, -127.0], [3.0, 0.0, 63.5]]]]> : tensor<1x1x2x3xf32>
  %y = gopt.conv2d %x, %w : (tensor<1x3x3x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

/// matmul [K, N]: one scale per column (axis 1); with transpose_b the
/// weight is [N, K] and the scales go per row (axis 0). A weight used by
/// two matmuls the same way is quantized once; a non-constant operand 1 is
/// left alone.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<3x2xf32>, %[[V:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[Q:.*]] = gopt.constant dense<{{\[}}[127, 127, -127], [-64, 64, 1]]> : tensor<2x3xi8>
// CHECK-DAG: %[[QT:.*]] = gopt.constant dense<{{\[}}[127, -64], [127, 64]]> : tensor<2x2xi8>
// CHECK-DAG: %[[W:.*]] = gopt.dequantize %[[Q]], %{{.*}} {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[WT:.*]] = gopt.dequantize %[[QT]], %{{.*}} : (tensor<2x2xi8>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK-DAG: gopt.matmul %[[A]], %[[W]] :
// CHECK-DAG: gopt.matmul %[[A]], %[[W]] :
// CHECK-DAG: gopt.matmul %[[A]], %[[WT]] {transpose_b = true}
// CHECK-DAG: gopt.matmul %[[A]], %[[V]] :
// CHECK-NOT: gopt.dequantize
// DEFAULT: remark: gopt-quantize-weights: quantized 0 weights to int8 (0 B -> 0 B), left 2 below min-elements
func.func @matmul(%a: tensor<3x2xf32>, %v: tensor<2x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>) {
  %m = gopt.constant dense<[[63.5, 2.0, -1.0], [-31.75, 1.0, 0.0078125]]> : tensor<2x3xf32>
  %y = gopt.matmul %a, %m : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %z = gopt.matmul %a, %m {transpose_a = false} : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %t = gopt.constant dense<[[2.0, -1.0], [4.0, 2.0]]> : tensor<2x2xf32>
  %u = gopt.matmul %a, %t {transpose_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %n = gopt.matmul %a, %v : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %y, %z, %u, %n : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>
}

// -----

/// Weights of 1024 elements and more are quantized by default; the smaller
/// matmul weight (1023 elements) stays f32 and f16 weights stay as they are.
/// (A splat weight gives a splat int8 constant: 0.5 = 127 * (0.5 / 127).)
// CHECK-LABEL: func @min_elements
// CHECK: gopt.constant dense<127> : tensor<32x32xi8>
// CHECK: gopt.dequantize
// CHECK: gopt.dequantize
// CHECK-NOT: gopt.dequantize
// DEFAULT: remark: gopt-quantize-weights: quantized 1 weight to int8 (4.0 KiB -> 1.1 KiB), left 1 below min-elements
// DEFAULT-NOT: remark
func.func @min_elements(%a: tensor<2x32xf32>, %b: tensor<2x1023xf32>, %h: tensor<2x32xf16>) -> (tensor<2x32xf32>, tensor<2x1xf32>, tensor<2x32xf16>) {
  %w = gopt.constant dense<0.5> : tensor<32x32xf32>
  %y = gopt.matmul %a, %w : (tensor<2x32xf32>, tensor<32x32xf32>) -> tensor<2x32xf32>
  %s = gopt.constant dense<0.25> : tensor<1023x1xf32>
  %z = gopt.matmul %b, %s : (tensor<2x1023xf32>, tensor<1023x1xf32>) -> tensor<2x1xf32>
  %f = gopt.constant dense<0.5> : tensor<32x32xf16>
  %g = gopt.matmul %h, %f : (tensor<2x32xf16>, tensor<32x32xf16>) -> tensor<2x32xf16>
  return %y, %z, %g : tensor<2x32xf32>, tensor<2x1xf32>, tensor<2x32xf16>
}

// -----

/// The dequantize goes right before the weight's first user, not after the
/// constant, so at run time each f32 copy lives only while it is needed.
// CHECK-LABEL: func @at_first_use
// CHECK: gopt.dequantize
// CHECK-NEXT: %[[A:.*]] = gopt.matmul
// CHECK-NEXT: gopt.constant
// CHECK-NEXT: gopt.constant
// CHECK-NEXT: gopt.dequantize
// CHECK-NEXT: gopt.matmul %[[A]]
// DEFAULT: remark: gopt-quantize-weights: quantized 0 weights to int8 (0 B -> 0 B), left 2 below min-elements
func.func @at_first_use(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w1 = gopt.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w2 = gopt.constant dense<[[0.5, 1.0], [1.5, 2.0]]> : tensor<2x2xf32>
  %a = gopt.matmul %x, %w1 : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %b = gopt.matmul %a, %w2 : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %b : tensor<1x2xf32>
}
