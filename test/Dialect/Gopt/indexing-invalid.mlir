// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the indexing ops.

/// gather's axis must be in [-rank, rank).
func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{'gopt.gather' op expects axis in [-2, 2) for a rank-2 operand, got 2}}
  %0 = gopt.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return
}

// -----

/// gather cannot index a scalar.
func.func @gather_scalar(%x: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{'gopt.gather' op expects x of rank >= 1, got a scalar}}
  %0 = gopt.gather %x, %i : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

/// gather's indices are integers.
func.func @gather_float_indices(%x: tensor<4x3xf32>, %i: tensor<2xf32>) {
  // expected-error@+1 {{'gopt.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = gopt.gather %x, %i : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

/// gather's declared result must match the inferred one.
func.func @gather_result(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error@+2 {{'gopt.gather' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error@+1 {{'gopt.gather' op failed to infer returned types}}
  %0 = gopt.gather %x, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<3x3xf32>
  return
}

// -----

/// gather_grad's dy has gather's result shape.
func.func @gather_grad_dy(%x: tensor<4x3xf32>, %i: tensor<2xi64>, %dy: tensor<2x4xf32>) {
  // expected-error@+1 {{'gopt.gather_grad' op expects dy of shape [2, 3] (gather's result), got [2, 4]}}
  %0 = gopt.gather_grad %x, %i, %dy : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// gather_grad's dy has x's element type.
func.func @gather_grad_type(%x: tensor<4x3xf32>, %i: tensor<2xi64>, %dy: tensor<2x3xbf16>) {
  // expected-error@+1 {{'gopt.gather_grad' op expects dy to have element type 'f32' (that of x), got 'bf16'}}
  %0 = gopt.gather_grad %x, %i, %dy : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xbf16>) -> tensor<4x3xf32>
  return
}

// -----

/// gather_elements needs indices of x's rank.
func.func @gather_elements_rank(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{'gopt.gather_elements' op expects indices of rank 2 (that of x [4, 3]), got [2]}}
  %0 = gopt.gather_elements %x, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

/// gather_elements' indices are no larger than x off the axis.
func.func @gather_elements_size(%x: tensor<4x3xf32>, %i: tensor<2x5xi64>) {
  // expected-error@+1 {{'gopt.gather_elements' op expects indices [2, 5] no larger than x [4, 3] off axis 0}}
  %0 = gopt.gather_elements %x, %i : (tensor<4x3xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  return
}

// -----

/// gather_nd's index tuples fit x.
func.func @gather_nd_tuple(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error@+1 {{'gopt.gather_nd' op expects the last dimension of indices [2, 3] in [1, 2]}}
  %0 = gopt.gather_nd %x, %i : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  return
}

// -----

/// gather_nd's index tuples have a static size.
func.func @gather_nd_dynamic(%x: tensor<4x3xf32>, %i: tensor<2x?xi64>) {
  // expected-error@+1 {{'gopt.gather_nd' op expects the last dimension of indices to be static, got [2, ?]}}
  %0 = gopt.gather_nd %x, %i : (tensor<4x3xf32>, tensor<2x?xi64>) -> tensor<2xf32>
  return
}

// -----

/// gather_nd's batch dimensions match.
func.func @gather_nd_batch(%x: tensor<4x3x2xf32>, %i: tensor<5x1xi64>) {
  // expected-error@+1 {{'gopt.gather_nd' op expects the first 1 dimensions of indices [5, 1] to equal those of x [4, 3, 2]}}
  %0 = gopt.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<4x3x2xf32>, tensor<5x1xi64>) -> tensor<5x2xf32>
  return
}

// -----

/// gather_nd's batch_dims is below both ranks.
func.func @gather_nd_batch_dims(%x: tensor<4x3xf32>, %i: tensor<4x1xi64>) {
  // expected-error@+1 {{'gopt.gather_nd' op expects batch_dims in [0, 2) (below the ranks of x [4, 3] and indices [4, 1]), got 2}}
  %0 = gopt.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<4x3xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return
}

// -----

/// scatter_elements' updates have the shape of indices.
func.func @scatter_elements_updates(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x2xf32>) {
  // expected-error@+1 {{'gopt.scatter_elements' op expects updates of the shape of indices [2, 3], got [2, 2]}}
  %0 = gopt.scatter_elements %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x2xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// scatter_elements' reduction is none, add, mul, max or min.
func.func @scatter_elements_reduction(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.scatter_elements' op expects reduction "none", "add", "mul", "max" or "min", got "maximum"}}
  %0 = gopt.scatter_elements %x, %i, %u {reduction = "maximum"} : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// scatter_elements' updates have x's element type.
func.func @scatter_elements_type(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xi32>) {
  // expected-error@+1 {{'gopt.scatter_elements' op expects updates to have element type 'f32' (that of x), got 'i32'}}
  %0 = gopt.scatter_elements %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return
}

// -----

/// scatter_nd's updates are indices.shape[:-1] + x.shape[k:].
func.func @scatter_nd_updates(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'gopt.scatter_nd' op expects updates of shape [2, 3] (indices' leading dimensions, then x's after the 1 indexed ones), got [2, 4]}}
  %0 = gopt.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// arg_max's axis must be in range.
func.func @arg_max_axis(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'gopt.arg_max' op expects axis in [-2, 2) for a rank-2 operand, got -3}}
  %0 = gopt.arg_max %x {axis = -3 : i64} : (tensor<4x3xf32>) -> tensor<3xi64>
  return
}

// -----

/// cumsum's axis must be in range.
func.func @cumsum_axis(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'gopt.cumsum' op expects axis in [-2, 2) for a rank-2 operand, got 5}}
  %0 = gopt.cumsum %x {axis = 5 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

/// top_k's k fits the axis.
func.func @top_k_k(%x: tensor<4x3xf32>) {
  // expected-error@+1 {{'gopt.top_k' op expects k <= 3 (dimension 1 of x [4, 3]), got 5}}
  %0:2 = gopt.top_k %x {k = 5 : i64} : (tensor<4x3xf32>) -> (tensor<4x5xf32>, tensor<4x5xi64>)
  return
}

// -----

/// tf_idf_vectorizer's search is quadratic in a row's length with a large
/// max_skip_count: 2 rows of 65536 values at every skip is refused.
func.func @tf_idf_vectorizer_work(%x: tensor<2x65536xi64>) {
  // expected-error@+1 {{'gopt.tf_idf_vectorizer' op expects at most 134217728 n-gram element comparisons, got about 8589934592 (2 rows of 65536 values, n-grams of 1 to 2, max_skip_count 1000000)}}
  %0 = gopt.tf_idf_vectorizer %x {mode = "TF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 1000000 : i64, ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2>, pool_int64s = array<i64: 1, 2, 1, 2>} : (tensor<2x65536xi64>) -> tensor<2x3xf32>
  return
}
