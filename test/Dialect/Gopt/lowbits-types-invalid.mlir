// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// Ops that compute refuse float8 and 4-bit operands: only casts, constants
/// and data movement take them.
func.func @add_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error@+1 {{'gopt.add' op operand #0 must be ranked tensor of}}
  %0 = gopt.add %x, %x : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

func.func @matmul_i4(%x: tensor<2x4xi4>, %w: tensor<4x3xi4>) -> tensor<2x3xi4> {
  // expected-error@+1 {{'gopt.matmul' op operand #0 must be ranked tensor of}}
  %0 = gopt.matmul %x, %w : (tensor<2x4xi4>, tensor<4x3xi4>) -> tensor<2x3xi4>
  return %0 : tensor<2x3xi4>
}

// -----

func.func @relu_f8(%x: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
  // expected-error@+1 {{'gopt.relu' op operand #0 must be ranked tensor of}}
  %0 = gopt.relu %x : (tensor<4xf8E5M2>) -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}
