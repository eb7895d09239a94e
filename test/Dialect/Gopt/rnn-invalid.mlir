// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of the recurrent ops.

/// w's gate rows are 4 * hidden_size for lstm.
func.func @lstm_w_rows(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x12x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.lstm' op expects w of shape [1, 12, 4], got [1, 8, 4]}}
  %y, %h, %c = gopt.lstm %x, %w, %r, %z, %z, %z, %z {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x12x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// A bidirectional layer has two sets of weights.
func.func @gru_directions(%x: tensor<3x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.gru' op expects w of shape [2, 9, 4], got [1, 9, 4]}}
  %y, %h = gopt.gru %x, %w, %r, %z, %z {hidden_size = 3 : i64, direction = "bidirectional"} : (tensor<3x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x2x2x3xf32>, tensor<2x2x3xf32>)
  return
}

// -----

/// The initial state is [directions, batch, hidden] or a scalar.
func.func @rnn_initial_h(%x: tensor<3x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %z: tensor<f32>, %h0: tensor<2x3xf32>) {
  // expected-error@+1 {{'gopt.rnn' op expects initial_h of shape [1, 2, 3] (or a scalar), got [2, 3]}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %h0 {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<2x3xf32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// sequence_lens has one length per batch row.
func.func @rnn_lens(%x: tensor<3x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %z: tensor<f32>, %lens: tensor<3xi32>) {
  // expected-error@+1 {{'gopt.rnn' op expects sequence_lens of shape [2], got [3]}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z, %lens {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>, tensor<3xi32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// x is [seq_length, batch, input_size].
func.func @rnn_rank(%x: tensor<2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.rnn' op expects x of rank 3 [seq_length, batch, input_size], got [2, 4]}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z {hidden_size = 3 : i64} : (tensor<2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// The float operands share x's element type.
func.func @lstm_mixed_types(%x: tensor<3x2x4xf32>, %w: tensor<1x12x4xf16>, %r: tensor<1x12x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.lstm' op expects w to have element type 'f32' (that of x), got 'f16'}}
  %y, %h, %c = gopt.lstm %x, %w, %r, %z, %z, %z, %z {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x12x4xf16>, tensor<1x12x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// hidden_size is positive.
func.func @rnn_hidden(%x: tensor<3x2x4xf32>, %w: tensor<1x0x4xf32>, %r: tensor<1x0x0xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.rnn' op expects hidden_size > 0, got 0}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z {hidden_size = 0 : i64} : (tensor<3x2x4xf32>, tensor<1x0x4xf32>, tensor<1x0x0xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x1x2x0xf32>, tensor<1x2x0xf32>)
  return
}

// -----

/// direction is one of forward, reverse, bidirectional.
func.func @rnn_direction(%x: tensor<3x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.rnn' op expects direction forward, reverse or bidirectional, got 'sideways'}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z {hidden_size = 3 : i64, direction = "sideways"} : (tensor<3x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>)
  return
}

// -----

/// A gradient op's dy has the forward's y shape (or is rank-0).
func.func @lstm_grad_dy(%x: tensor<3x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %z: tensor<f32>, %dy: tensor<3x2x3xf32>) {
  // expected-error@+1 {{'gopt.lstm_grad' op expects dy of shape [3, 1, 2, 3] (or a scalar), got [3, 2, 3]}}
  %0:7 = gopt.lstm_grad %x, %w, %r, %z, %z, %z, %z, %dy, %z, %z {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<3x2x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
  return
}

// -----

/// dy_h has the final state's shape.
func.func @gru_grad_dyh(%x: tensor<3x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>, %z: tensor<f32>, %dyh: tensor<1x3x3xf32>) {
  // expected-error@+1 {{'gopt.gru_grad' op expects dy_h of shape [1, 2, 3] (or a scalar), got [1, 3, 3]}}
  %0:5 = gopt.gru_grad %x, %w, %r, %z, %z, %z, %dyh {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<1x3x3xf32>) -> (tensor<3x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<f32>, tensor<f32>)
  return
}

// -----

/// The forward's operands are checked as the forward checks them.
func.func @rnn_grad_w(%x: tensor<3x2x4xf32>, %w: tensor<1x3x5xf32>, %r: tensor<1x3x3xf32>, %z: tensor<f32>) {
  // expected-error@+1 {{'gopt.rnn_grad' op expects w of shape [1, 3, 4], got [1, 3, 5]}}
  %0:5 = gopt.rnn_grad %x, %w, %r, %z, %z, %z, %z {hidden_size = 3 : i64} : (tensor<3x2x4xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<3x2x4xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>)
  return
}
