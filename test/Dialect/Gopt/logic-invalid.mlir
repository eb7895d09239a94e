// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of GoptLogicOps.td.

/// Comparison operands share an element type.
func.func @compare_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'gopt.less' op expects operands of one element type, got 'f32' and 'i32'}}
  %0 = gopt.less %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

/// Comparison shapes broadcast.
func.func @compare_shapes(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'gopt.equal' op cannot broadcast operand shapes [4] and [3]}}
  %0 = gopt.equal %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  return
}

// -----

/// A comparison's result is i1.
func.func @compare_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.greater' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = gopt.greater %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

/// Logical ops take i1.
func.func @and_types(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'gopt.and' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = gopt.and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

/// where's condition is i1.
func.func @where_condition(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = gopt.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

/// where's x and y share an element type.
func.func @where_types(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{'gopt.where' op expects x and y of one element type, got 'f32' and 'i32'}}
  %0 = gopt.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

/// where's condition broadcasts with the values.
func.func @where_shapes(%c: tensor<3xi1>, %x: tensor<2x4xf32>) {
  // expected-error@+1 {{'gopt.where' op condition and values: cannot broadcast operand shapes [3] and [2, 4]}}
  %0 = gopt.where %c, %x, %x : (tensor<3xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

/// mod's fmod is 0 or 1.
func.func @mod_fmod(%a: tensor<4xi32>) {
  // expected-error@+1 {{'gopt.mod' op expects fmod 0 or 1, got 2}}
  %0 = gopt.mod %a, %a {fmod = 2 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

/// is_nan takes floats.
func.func @is_nan_int(%x: tensor<4xi32>) {
  // expected-error@+1 {{'gopt.is_nan' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = gopt.is_nan %x : (tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

/// expand's target shape broadcasts with the input.
func.func @expand_shape(%x: tensor<3x2xf32>) {
  // expected-error@+1 {{'gopt.expand' op cannot broadcast operand shapes [3, 2] and [3, 4]}}
  %0 = gopt.expand %x {shape = array<i64: 3, 4>} : (tensor<3x2xf32>) -> tensor<3x4xf32>
  return
}

// -----

/// expand's target shape has no negative entries.
func.func @expand_negative(%x: tensor<3x1xf32>) {
  // expected-error@+1 {{'gopt.expand' op expects a non-negative target shape, got [3, -1]}}
  %0 = gopt.expand %x {shape = array<i64: 3, -1>} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  return
}

// -----

/// tile has one repeat per dimension.
func.func @tile_rank(%x: tensor<3x2xf32>) {
  // expected-error@+1 {{'gopt.tile' op expects one repeat per dimension of the input [3, 2], got repeats [2]}}
  %0 = gopt.tile %x {repeats = array<i64: 2>} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  return
}

// -----

/// tile's repeats are non-negative.
func.func @tile_negative(%x: tensor<3x2xf32>) {
  // expected-error@+1 {{'gopt.tile' op expects non-negative repeats, got [1, -2]}}
  %0 = gopt.tile %x {repeats = array<i64: 1, -2>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return
}
