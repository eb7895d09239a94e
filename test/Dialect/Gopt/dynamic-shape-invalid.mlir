// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of gopt.dynamic_reshape.

/// The target's length is the result's rank, so it must be static.
func.func @target_length_dynamic(%x: tensor<4x6xf32>, %s: tensor<?xi64>) {
  // expected-error@+1 {{'gopt.dynamic_reshape' op expects shape to be a 1-D tensor of static length, got 'tensor<?xi64>'}}
  %0 = gopt.dynamic_reshape %x, %s : (tensor<4x6xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  return
}

// -----

/// A constant target is checked against the element count.
func.func @constant_target_count(%x: tensor<4x6xf32>) {
  %s = gopt.constant dense<[5, 5]> : tensor<2xi64>
  // expected-error@+1 {{'gopt.dynamic_reshape' op cannot reshape [4, 6] (24 elements) to [5, 5] (25 elements)}}
  %0 = gopt.dynamic_reshape %x, %s : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<5x5xf32>
  return
}

// -----

/// At most one -1.
func.func @two_inferred(%x: tensor<4x6xf32>) {
  %s = gopt.constant dense<[-1, -1]> : tensor<2xi64>
  // expected-error@+1 {{'gopt.dynamic_reshape' op expects at most one -1 in the target shape, got [-1, -1]}}
  %0 = gopt.dynamic_reshape %x, %s : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

/// A dynamic op's value operand has a static length: it decides the rank.
func.func @value_length_dynamic(%x: tensor<4x6xf32>, %s: tensor<?xi64>) {
  // expected-error@+1 {{'gopt.dynamic_expand' op expects operand #1 ('shape') to be a scalar or a 1-D tensor of static length, got 'tensor<?xi64>'}}
  %0 = gopt.dynamic_expand %x, %s : (tensor<4x6xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  return
}

// -----

/// gopt.range's declared length must be the count its bounds give.
func.func @range_count() {
  // expected-error@+1 {{'gopt.range' op has 5 elements, its type says 'tensor<4xi64>'}}
  %0 = gopt.range {start = 0.0 : f64, limit = 5.0 : f64, delta = 1.0 : f64} : tensor<4xi64>
  return
}
