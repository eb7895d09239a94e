// RUN: gopt-opt %s -split-input-file -verify-each -verify-diagnostics -gopt-convert-layout=layout=auto -o /dev/null
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-convert-layout=layout=auto | FileCheck %s
// RUN: gopt-opt %s -split-input-file -gopt-convert-layout="layout=auto target=cpu" 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not gopt-opt %s -split-input-file -gopt-convert-layout="layout=NCHW strict=true" 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: gopt-opt %s -split-input-file -gopt-convert-layout="layout=auto precision=bf16" 2>&1 | FileCheck %s --check-prefix=LOWP
// RUN: gopt-opt %s -split-input-file -gopt-convert-layout="layout=auto precision=f16 target=cpu" 2>&1 | FileCheck %s --check-prefix=LOWP-CPU
// RUN: not gopt-opt %s -split-input-file -gopt-convert-layout="layout=auto precision=f64" 2>&1 | FileCheck %s --check-prefix=BADP
// BADP: error: gopt-convert-layout: unknown precision 'f64' (expected f32, bf16 or f16)

/// auto picks NCHW for f32 and says why; for an f32 graph that a later
/// pass lowers to bf16/f16 (precision=), NHWC on the gpu.
// CHECK-LABEL: func @auto_f32
// CHECK: data_format = "NCHW"
// CPU: remark: layout=auto chose NCHW for cpu: oneDNN
// LOWP: remark: layout=auto chose NHWC for gpu: tensor cores read f16/bf16 activations in NHWC
// LOWP-LABEL: func @auto_f32
// LOWP-NOT: gopt.transpose
// LOWP: gopt.max_pool %arg0 {kernel = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>)
// LOWP-CPU: remark: layout=auto chose NCHW for cpu: gopt's CPU schedule keeps NCHW convolutions in oneDNN's blocked layouts
// expected-remark@+1 {{layout=auto chose NCHW for gpu: cuDNN's fastest f32 kernels are NCHW}}
func.func @auto_f32(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %p = gopt.max_pool %x {kernel = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %p : tensor<1x4x4x2xf32>
}

// -----

/// auto keeps f16 graphs NHWC for tensor cores: an NCHW op becomes NHWC.
// CHECK-LABEL: func @auto_f16
// CHECK: gopt.max_pool {{.*}} : (tensor<1x4x4x2xf16>)
// expected-remark@+1 {{layout=auto chose NHWC for gpu: tensor cores read f16/bf16 activations in NHWC}}
func.func @auto_f16(%x: tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16> {
  %p = gopt.max_pool %x {kernel = array<i64: 1, 1>, data_format = "NCHW"} : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  return %p : tensor<1x2x4x4xf16>
}

// -----

/// A rank-3 batch norm cannot be converted: it stays, with a remark (an
/// error under strict=true).
// STRICT: error: gopt-convert-layout: cannot convert: rank-3 input
// expected-remark@+1 {{layout=auto chose NCHW}}
func.func @rank3(%x: tensor<2x5x3xf32>, %p: tensor<3xf32>) -> tensor<2x5x3xf32> {
  // expected-remark@+1 {{gopt-convert-layout: left in its layout: rank-3 input}}
  %y = gopt.batch_norm %x, %p, %p, %p, %p : (tensor<2x5x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}
