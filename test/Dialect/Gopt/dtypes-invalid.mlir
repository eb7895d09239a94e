// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// The new element types are rejected where an op's constraint leaves them
/// out, and bit_shift's operands and direction are checked.

/// Pooling takes floats only.
func.func @max_pool_unsigned(%x: tensor<1x4x4x1xui8>) {
  // expected-error@+1 {{'gopt.max_pool' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<1x4x4x1xui8>'}}
  %0 = gopt.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x1xui8>) -> tensor<1x2x2x1xui8>
  return
}

// -----

/// Signless integers are not bit_shift operands.
func.func @bit_shift_signed(%a: tensor<3xi32>) {
  // expected-error@+1 {{'gopt.bit_shift' op operand #0 must be ranked tensor of 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<3xi32>'}}
  %0 = gopt.bit_shift %a, %a {direction = "LEFT"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return
}

// -----

/// Both operands have one unsigned type.
func.func @bit_shift_mixed(%a: tensor<3xui8>, %b: tensor<3xui16>) {
  // expected-error@+1 {{'gopt.bit_shift' op requires the same element type for all operands and results}}
  %0 = gopt.bit_shift %a, %b {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui16>) -> tensor<3xui8>
  return
}

// -----

func.func @bit_shift_direction(%a: tensor<3xui8>) {
  // expected-error@+1 {{'gopt.bit_shift' op expects direction "LEFT" or "RIGHT", got "UP"}}
  %0 = gopt.bit_shift %a, %a {direction = "UP"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return
}
