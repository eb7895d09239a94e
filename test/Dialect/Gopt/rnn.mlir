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
