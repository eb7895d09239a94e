// RUN: gopt-opt %s -split-input-file | gopt-opt | FileCheck %s

/// The recurrent ops parse, print and round-trip; defaults stay implicit.
/// Rank-0 b, states and peepholes broadcast; a dynamic batch propagates.

// CHECK-LABEL: func @lstm
func.func @lstm(%x: tensor<10x?x32xf32>, %w: tensor<2x256x32xf32>, %r: tensor<2x256x64xf32>, %b: tensor<2x512xf32>, %zero: tensor<f32>) -> (tensor<10x2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>) {
  // CHECK: gopt.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {direction = "bidirectional", hidden_size = 64 : i64} : (tensor<10x?x32xf32>, tensor<2x256x32xf32>, tensor<2x256x64xf32>, tensor<2x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<10x2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>)
  %y, %h, %c = gopt.lstm %x, %w, %r, %b, %zero, %zero, %zero {hidden_size = 64 : i64, direction = "bidirectional"} : (tensor<10x?x32xf32>, tensor<2x256x32xf32>, tensor<2x256x64xf32>, tensor<2x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<10x2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>)
  return %y, %h, %c : tensor<10x2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>
}

// -----

// CHECK-LABEL: func @lstm_full
func.func @lstm_full(%x: tensor<3x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %b: tensor<1x24xf32>, %h0: tensor<1x2x3xf32>, %c0: tensor<1x2x3xf32>, %p: tensor<1x9xf32>, %lens: tensor<2xi32>) -> tensor<3x1x2x3xf32> {
  // CHECK: gopt.lstm {{.*}} {clip = 5.000000e+00 : f32, hidden_size = 3 : i64, input_forget = true} : (tensor<3x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x9xf32>, tensor<2xi32>)
  %y, %h, %c = gopt.lstm %x, %w, %r, %b, %h0, %c0, %p, %lens {hidden_size = 3 : i64, clip = 5.0 : f32, input_forget = true} : (tensor<3x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x9xf32>, tensor<2xi32>) -> (tensor<3x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  return %y : tensor<3x1x2x3xf32>
}

// -----

// CHECK-LABEL: func @gru_rnn
func.func @gru_rnn(%x: tensor<1x3x2xf32>, %w: tensor<1x15x2xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %zero: tensor<f32>, %wr: tensor<1x4x2xf32>, %rr: tensor<1x4x4xf32>) -> (tensor<1x1x3x5xf32>, tensor<1x3x4xf32>) {
  // CHECK: gopt.gru {{.*}} {direction = "reverse", hidden_size = 5 : i64, linear_before_reset = true} : (tensor<1x3x2xf32>, tensor<1x15x2xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<f32>) -> (tensor<1x1x3x5xf32>, tensor<1x3x5xf32>)
  %y, %h = gopt.gru %x, %w, %r, %b, %zero {hidden_size = 5 : i64, direction = "reverse", linear_before_reset = true} : (tensor<1x3x2xf32>, tensor<1x15x2xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<f32>) -> (tensor<1x1x3x5xf32>, tensor<1x3x5xf32>)
  // CHECK: gopt.rnn {{.*}} {hidden_size = 4 : i64} : (tensor<1x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<f32>, tensor<f32>) -> (tensor<1x1x3x4xf32>, tensor<1x3x4xf32>)
  %ry, %rh = gopt.rnn %x, %wr, %rr, %zero, %zero {hidden_size = 4 : i64} : (tensor<1x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<f32>, tensor<f32>) -> (tensor<1x1x3x4xf32>, tensor<1x3x4xf32>)
  return %y, %rh : tensor<1x1x3x5xf32>, tensor<1x3x4xf32>
}

// -----

/// The gradients: the forward's operands, then its results' gradients
/// (rank-0 for a result the loss does not use); each operand's gradient
/// has the operand's type, rank-0 ones included.
// CHECK-LABEL: func @lstm_grad
func.func @lstm_grad(%x: tensor<4x?x5xf32>, %w: tensor<2x12x5xf32>, %r: tensor<2x12x3xf32>, %b: tensor<2x24xf32>, %z: tensor<f32>, %dy: tensor<4x2x?x3xf32>, %lens: tensor<?xi64>) -> (tensor<4x?x5xf32>, tensor<f32>) {
  // CHECK: gopt.lstm_grad {{.*}} {direction = "bidirectional", hidden_size = 3 : i64} : (tensor<4x?x5xf32>, tensor<2x12x5xf32>, tensor<2x12x3xf32>, tensor<2x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4x2x?x3xf32>, tensor<f32>, tensor<f32>, tensor<?xi64>) -> (tensor<4x?x5xf32>, tensor<2x12x5xf32>, tensor<2x12x3xf32>, tensor<2x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
  %dx, %dw, %dr, %db, %dh, %dc, %dp = gopt.lstm_grad %x, %w, %r, %b, %z, %z, %z, %dy, %z, %z, %lens {hidden_size = 3 : i64, direction = "bidirectional"} : (tensor<4x?x5xf32>, tensor<2x12x5xf32>, tensor<2x12x3xf32>, tensor<2x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4x2x?x3xf32>, tensor<f32>, tensor<f32>, tensor<?xi64>) -> (tensor<4x?x5xf32>, tensor<2x12x5xf32>, tensor<2x12x3xf32>, tensor<2x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
  return %dx, %dp : tensor<4x?x5xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func @gru_rnn_grad
func.func @gru_rnn_grad(%x: tensor<4x2x5xf32>, %w: tensor<1x9x5xf32>, %r: tensor<1x9x3xf32>, %b: tensor<1x18xf32>, %h0: tensor<1x2x3xf32>, %dy: tensor<4x1x2x3xf32>, %rw: tensor<1x3x5xf32>, %rr: tensor<1x3x3xf32>, %z: tensor<f32>) -> (tensor<1x2x3xf32>, tensor<1x3x5xf32>) {
  // CHECK: gopt.gru_grad {{.*}} {hidden_size = 3 : i64, linear_before_reset = true} : {{.*}} -> (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>)
  %dx, %dw, %dr, %db, %dh = gopt.gru_grad %x, %w, %r, %b, %h0, %dy, %h0 {hidden_size = 3 : i64, linear_before_reset = true} : (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>, tensor<4x1x2x3xf32>, tensor<1x2x3xf32>) -> (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>)
  // CHECK: gopt.rnn_grad {{.*}} {direction = "reverse", hidden_size = 3 : i64} : {{.*}} -> (tensor<4x2x5xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>)
  %rdx, %rdw, %rdr, %rdb, %rdh = gopt.rnn_grad %x, %rw, %rr, %z, %z, %dy, %z {hidden_size = 3 : i64, direction = "reverse"} : (tensor<4x2x5xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>, tensor<4x1x2x3xf32>, tensor<f32>) -> (tensor<4x2x5xf32>, tensor<1x3x5xf32>, tensor<1x3x3xf32>, tensor<f32>, tensor<f32>)
  return %dh, %rdw : tensor<1x2x3xf32>, tensor<1x3x5xf32>
}
