// RUN: gopt-opt %s -split-input-file -verify-each -verify-diagnostics --gopt-report -gopt-strip-debug-ops -gopt-fold-constants -gopt-fuse-batch-norm -gopt-convert-layout -gopt-fold-batch-norm -gopt-fuse-conv-bias-activation -o /dev/null
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-strip-debug-ops=report=true -gopt-fold-constants -gopt-fuse-batch-norm 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: gopt-opt %s -split-input-file -verify-each -gopt-strip-debug-ops -gopt-fold-constants -gopt-fuse-batch-norm -gopt-convert-layout -gopt-fold-batch-norm -gopt-fuse-conv-bias-activation 2>&1 | FileCheck %s --check-prefix=QUIET

/// --gopt-report (or a pass's report=true) makes every gopt pass say what it
/// changed in each function, one remark per pass run: the information
/// -mlir-pass-statistics cannot print with a release libMLIR.

// ONE: remark: gopt-strip-debug-ops: removed 3 debug ops (1 identity, 1 check_numerics, 1 stop_gradient, 0 dropout), erased 1 dead op
// ONE-NOT: gopt-fuse-batch-norm:
// ONE: remark: gopt-strip-debug-ops: removed 0 debug ops
// QUIET-NOT: remark

// expected-remark@+6 {{gopt-strip-debug-ops: removed 3 debug ops (1 identity, 1 check_numerics, 1 stop_gradient, 0 dropout), erased 1 dead op}}
// expected-remark@+5 {{gopt-fold-constants: folded 5 ops to constants}}
// expected-remark@+4 {{gopt-fuse-batch-norm: fused 2 batch norms (1 training, 1 inference)}}
// expected-remark@+3 {{gopt-convert-layout: converted 3 ops to NCHW, removed 2 transposes, 4 remain (0 in the input)}}
// expected-remark@+2 {{gopt-fold-batch-norm: folded 1 batch norm into conv2d/matmul weights, 1 remain}}
// expected-remark@+1 {{gopt-fuse-conv-bias-activation: fused 0 biases and 1 activation into conv2d (1 conv2d in all)}}
func.func @two_batch_norms(%x: tensor<2x8x8x4xf32>, %t: tensor<2x4x4x4xf32>) -> (tensor<2x8x8x4xf32>, tensor<2x4x4x4xf32>) {
  %xi = gopt.identity %x : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  %w = gopt.constant dense<0.5> : tensor<1x1x4x4xf32>
  %c = gopt.conv2d %xi, %w {strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<2x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x8x8x4xf32>
  %cc = gopt.check_numerics %c {message = "conv"} : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  // Inference BN from moving statistics: rsqrt(var + eps) * gamma is folded
  // to constants first (5 ops), then x * s + b fuses.
  %eps = gopt.constant dense<1.0e-3> : tensor<f32>
  %gamma = gopt.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
  %beta = gopt.constant dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4xf32>
  %mvar = gopt.constant dense<[1.0, 0.5, 2.0, 1.0]> : tensor<4xf32>
  %mmean = gopt.constant dense<[0.1, 0.0, -0.1, 0.2]> : tensor<4xf32>
  %ve = gopt.add %mvar, %eps : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = gopt.rsqrt %ve : (tensor<4xf32>) -> tensor<4xf32>
  %inv = gopt.mul %r, %gamma : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %xs = gopt.mul %cc, %inv : (tensor<2x8x8x4xf32>, tensor<4xf32>) -> tensor<2x8x8x4xf32>
  %mi = gopt.mul %mmean, %inv : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %sh = gopt.sub %beta, %mi : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = gopt.add %xs, %sh : (tensor<2x8x8x4xf32>, tensor<4xf32>) -> tensor<2x8x8x4xf32>
  %relu = gopt.relu %y : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  // Training BN from the batch moments.
  %tm = gopt.reduce_mean %t {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<2x4x4x4xf32>) -> tensor<1x1x1x4xf32>
  %tsg = gopt.stop_gradient %tm : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %tsq = gopt.squared_difference %t, %tsg : (tensor<2x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<2x4x4x4xf32>
  %tv = gopt.reduce_mean %tsq {axes = array<i64: 0, 1, 2>, keep_dims = true} : (tensor<2x4x4x4xf32>) -> tensor<1x1x1x4xf32>
  %tve = gopt.add %tv, %eps : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %tr = gopt.rsqrt %tve : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %txs = gopt.mul %t, %tr : (tensor<2x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<2x4x4x4xf32>
  %tmi = gopt.mul %tm, %tr : (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %tsh = gopt.sub %beta, %tmi : (tensor<4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %ty = gopt.add %txs, %tsh : (tensor<2x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<2x4x4x4xf32>
  // Dead after strip-debug-ops removed nothing it feeds: erased.
  %dead = gopt.neg %x : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  return %relu, %ty : tensor<2x8x8x4xf32>, tensor<2x4x4x4xf32>
}

// -----

// expected-remark@+6 {{gopt-strip-debug-ops: removed 0 debug ops (0 identity, 0 check_numerics, 0 stop_gradient, 0 dropout), erased 0 dead ops}}
// expected-remark@+5 {{gopt-fold-constants: folded 0 ops to constants}}
// expected-remark@+4 {{gopt-fuse-batch-norm: fused 0 batch norms (0 training, 0 inference)}}
// expected-remark@+3 {{gopt-convert-layout: converted 0 ops to NCHW, removed 0 transposes, 0 remain (0 in the input)}}
// expected-remark@+2 {{gopt-fold-batch-norm: folded 0 batch norms into conv2d/matmul weights, 0 remain}}
// expected-remark@+1 {{gopt-fuse-conv-bias-activation: fused 0 biases and 0 activations into conv2d (0 conv2d in all)}}
func.func @nothing_to_do(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = gopt.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
