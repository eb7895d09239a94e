// RUN: gopt-opt %s -split-input-file -verify-each --gopt-quantize=calibration=%S/Inputs/calibration-small.json | FileCheck %s
// RUN: gopt-opt %s -split-input-file --gopt-quantize='calibration=%S/Inputs/calibration-small.json report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=mode=dynamic -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not gopt-opt %s -split-input-file --gopt-quantize -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%S/Inputs/no-such-file.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%S/Inputs/calibration-bad-format.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTJSON
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%S/Inputs/calibration-other-graph.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%S/Inputs/calibration-negative.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not gopt-opt %s -split-input-file --gopt-quantize=calibration=%S/Inputs/calibration-overflow.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERFLOW

// MODE: error: gopt-quantize: unknown mode 'dynamic' (expected static)
// NOFILE: error: gopt-quantize: mode=static needs calibration=FILE (from gopt-run --calibrate)
// MISSING: error: gopt-quantize: calibration file '{{.*}}no-such-file.json': No such file or directory
// FORMAT: error: gopt-quantize: calibration file '{{.*}}calibration-bad-format.json': expected an object with "format": "gopt-calibration"
// NOTJSON: error: gopt-quantize: calibration file '{{.*}}quantize-static.mlir': not JSON:
// NEGATIVE: error: gopt-quantize: calibration file '{{.*}}calibration-negative.json': tensor 'x' has "threshold" -1, expected a finite non-negative f32 number
// OVERFLOW: error: gopt-quantize: calibration file '{{.*}}calibration-overflow.json': tensor 'x' has "threshold" 1e+39, expected a finite non-negative f32 number
// OTHER: error: gopt-quantize: calibration file '{{.*}}calibration-other-graph.json' matches none of the graph's 2 conv2d/matmul activations (e.g. 'x'): it was made for another graph or another pipeline

/// The conv's input (the argument, named by its gopt.name) and output get a
/// Q/DQ pair with scale threshold / 127 (2.54 / 127 = 0.02, 3.81 / 127 =
/// 0.03); the weight becomes int8 per output channel; the bias stays f32.
/// relu reads the dequantized conv output; the function returns the f32
/// relu (not an input or output of conv2d/matmul, so no pair).
// CHECK-LABEL: func @conv_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x3xf32> {gopt.name = "x"})
// CHECK-DAG: %[[SX:.*]] = gopt.constant dense<2.000000e-02> : tensor<1xf32>
// CHECK-DAG: %[[QX:.*]] = gopt.quantize %[[X]], %[[SX]] : (tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x2x3x3xi8>
// CHECK-DAG: %[[DX:.*]] = gopt.dequantize %[[QX]], %[[SX]] : (tensor<1x2x3x3xi8>, tensor<1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-DAG: %[[QW:.*]] = gopt.constant dense<{{.*}}> : tensor<2x2x1x1xi8>
// CHECK-DAG: %[[DW:.*]] = gopt.dequantize %[[QW]], {{.*}} : (tensor<2x2x1x1xi8>, tensor<2xf32>) -> tensor<2x2x1x1xf32>
// CHECK-DAG: %[[B:.*]] = gopt.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK: %[[C:.*]] = gopt.conv2d %[[DX]], %[[DW]], %[[B]]
// CHECK-NEXT: %[[SC:.*]] = gopt.constant dense<3.000000e-02> : tensor<1xf32>
// CHECK-NEXT: %[[QC:.*]] = gopt.quantize %[[C]], %[[SC]]
// CHECK-NEXT: %[[DC:.*]] = gopt.dequantize %[[QC]], %[[SC]]
// CHECK-NEXT: %[[R:.*]] = gopt.relu %[[DC]]
// CHECK-NEXT: return %[[R]]
// REPORT: remark: gopt-quantize: stored 2 activations and 1 weight in int8
func.func @conv_relu(%x: tensor<1x2x3x3xf32> {gopt.name = "x"}) -> tensor<1x2x3x3xf32> {
  %w = gopt.constant dense<[[[[0.5]], [[-1.0]]], [[[0.25]], [[2.0]]]]> : tensor<2x2x1x1xf32>
  %b = gopt.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc("conv")
  %r = gopt.relu %c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("relu")
  return %r : tensor<1x2x3x3xf32>
}

// -----

/// A graph output keeps its f32 value: the matmul's result is returned, so
/// the return reads it directly while the add reads the dequantized copy.
// CHECK-LABEL: func @returned
// CHECK: %[[M:.*]] = gopt.matmul
// CHECK: %[[Q:.*]] = gopt.quantize %[[M]]
// CHECK: %[[D:.*]] = gopt.dequantize %[[Q]]
// CHECK: %[[A:.*]] = gopt.add %[[D]], %[[D]]
// CHECK: return %[[M]], %[[A]]
func.func @returned(%x: tensor<2x4xf32> {gopt.name = "x"}) -> (tensor<2x2xf32> {gopt.name = "matmul"}, tensor<2x2xf32>) {
  %w = gopt.constant dense<1.0> : tensor<4x2xf32>
  %m = gopt.matmul %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("mm")
  %a = gopt.add %m, %m : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m, %a : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

/// A max_pool of a quantized value keeps its input's scale (3.81 / 127 =
/// 0.03 from "conv"), not its own calibrated one ("pool": 2 / 127), so
/// pooling the int8 values is exact.
// CHECK-LABEL: func @pool_shares_scale
// CHECK: %[[C:.*]] = gopt.conv2d
// CHECK: %[[S:.*]] = gopt.constant dense<3.000000e-02> : tensor<1xf32>
// CHECK: %[[QC:.*]] = gopt.quantize %[[C]], %[[S]]
// CHECK: %[[DC:.*]] = gopt.dequantize %[[QC]], %[[S]]
// CHECK: %[[P:.*]] = gopt.max_pool %[[DC]]
// CHECK: %[[SP:.*]] = gopt.constant dense<3.000000e-02> : tensor<1xf32>
// CHECK: gopt.quantize %[[P]], %[[SP]]
// CHECK-NOT: 0.0157
func.func @pool_shares_scale(%x: tensor<1x2x4x4xf32> {gopt.name = "x"}) -> (tensor<1x2x2x2xf32> {gopt.name = "conv2"}) {
  %w = gopt.constant dense<0.5> : tensor<2x2x1x1xf32>
  %c = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW", activation = "relu"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("conv")
  %p = gopt.max_pool %c {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
  %w2 = gopt.constant dense<0.25> : tensor<2x2x1x1xf32>
  %c2 = gopt.conv2d %p, %w2 {data_format = "NCHW", filter_format = "OIHW"} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32> loc("conv2")
  return %c2 : tensor<1x2x2x2xf32>
}
