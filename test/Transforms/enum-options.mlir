/// An option with a fixed set of values is checked when the pipeline is
/// parsed: a bad value is one line naming the pass or pipeline, the option
/// and the values it takes, before any pass runs (so no IR is printed).
// RUN: not gopt-opt %s --gopt-optimize=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET --implicit-check-not=func
// RUN: not gopt-opt %s --gopt-optimize=target=tpu 2>&1 | count 1
// TARGET: error: gopt-optimize: unknown target 'tpu' (expected cpu or gpu)
// RUN: not gopt-opt %s --pass-pipeline='builtin.module(gopt-optimize{precision=fp8})' 2>&1 | FileCheck %s --check-prefix=PRECISION --implicit-check-not=func.func
// PRECISION: error: gopt-optimize: unknown precision 'fp8' (expected f32, bf16 or f16)
// RUN: not gopt-opt %s --gopt-optimize=layout=NWHC 2>&1 | FileCheck %s --check-prefix=LAYOUT --implicit-check-not=func
// LAYOUT: error: gopt-optimize: unknown layout 'NWHC' (expected NCHW, NHWC or auto)
// RUN: not gopt-opt %s --gopt-convert-layout=target=tpu 2>&1 | FileCheck %s --check-prefix=CL-TARGET --implicit-check-not=func
// RUN: not gopt-opt %s --gopt-convert-layout=target=tpu 2>&1 | count 1
// CL-TARGET: error: gopt-convert-layout: unknown target 'tpu' (expected cpu or gpu)
// RUN: not gopt-opt %s --gopt-place-devices=default=tpu 2>&1 | FileCheck %s --check-prefix=DEFAULT --implicit-check-not=func
// DEFAULT: error: gopt-place-devices: unknown default 'tpu' (expected cpu or gpu)
// RUN: not gopt-opt %s --gopt-placement-report=default=tpu 2>&1 | FileCheck %s --check-prefix=REPORT-DEFAULT --implicit-check-not=func
// REPORT-DEFAULT: error: gopt-placement-report: unknown default 'tpu' (expected cpu or gpu)
// RUN: not gopt-opt %s --gopt-add-loss=label-type=u8 2>&1 | FileCheck %s --check-prefix=LABELS --implicit-check-not=func
// LABELS: error: gopt-add-loss: unknown label-type 'u8' (expected i64 or i32)
/// An unknown option name is still MLIR's own one-line error.
// RUN: not gopt-opt %s --gopt-convert-layout=bogus=1 2>&1 | FileCheck %s --check-prefix=NAME --implicit-check-not=func
// NAME: error: <Pass-Options-Parser>: no such option bogus

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = gopt.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
