// RUN: gopt-opt %s -split-input-file -verify-each -verify-diagnostics -gopt-place-devices=allow-soft-placement=true | FileCheck %s

/// The CUDA recurrent ops run on cuDNN's RNN (runtime/src/cuda/RnnOps.cpp):
/// pinned to the GPU, the forms it does not compute move to the CPU, with
/// the reason, and the others stay.
// CHECK-LABEL: func @lstm_zero_p
// CHECK: gopt.lstm {{.*}}device = "gpu"
func.func @lstm_zero_p(%x: tensor<4x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  %y, %h, %c = gopt.lstm %x, %w, %r, %z, %z, %z, %z {device = "gpu", hidden_size = 16 : i64} : (tensor<4x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @lstm_p
// CHECK: gopt.lstm {{.*}}device = "cpu"
func.func @lstm_p(%x: tensor<4x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  %p = gopt.constant dense<0.5> : tensor<f32>
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): lstm with peepholes is CPU-only (cuDNN's LSTM has none)}}
  %y, %h, %c = gopt.lstm %x, %w, %r, %z, %z, %z, %p {device = "gpu", hidden_size = 16 : i64} : (tensor<4x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @gru_default
// CHECK: gopt.gru {{.*}}device = "cpu"
func.func @gru_default(%x: tensor<4x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): gru with linear_before_reset = false is CPU-only (cuDNN's GRU computes the linear-before-reset form)}}
  %y, %h = gopt.gru %x, %w, %r, %z, %z {device = "gpu", hidden_size = 16 : i64} : (tensor<4x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @gru_lbr
// CHECK: gopt.gru {{.*}}device = "gpu"
func.func @gru_lbr(%x: tensor<4x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  %y, %h = gopt.gru %x, %w, %r, %z, %z {device = "gpu", hidden_size = 16 : i64, linear_before_reset = true} : (tensor<4x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @rnn_lens
// CHECK: gopt.rnn {{.*}}device = "cpu"
func.func @rnn_lens(%x: tensor<4x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>, %lens: tensor<2xi32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): rnn with sequence_lens is CPU-only}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z, %lens {device = "gpu", hidden_size = 16 : i64} : (tensor<4x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>, tensor<f32>, tensor<f32>, tensor<2xi32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @rnn_clip
// CHECK: gopt.rnn {{.*}}device = "cpu"
func.func @rnn_clip(%x: tensor<4x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>) -> tensor<4x1x2x16xf32> {
  %z = gopt.constant dense<0.0> : tensor<f32>
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): rnn with clip is CPU-only (cuDNN does not clip gates)}}
  %y, %h = gopt.rnn %x, %w, %r, %z, %z {device = "gpu", hidden_size = 16 : i64, clip = 2.0 : f32} : (tensor<4x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x1x2x16xf32>, tensor<1x2x16xf32>)
  return %y : tensor<4x1x2x16xf32>
}

// -----

// CHECK-LABEL: func @gru_f16
// CHECK: gopt.gru {{.*}}device = "cpu"
func.func @gru_f16(%x: tensor<4x2x8xf16>, %w: tensor<1x48x8xf16>, %r: tensor<1x48x16xf16>) -> tensor<4x1x2x16xf16> {
  %z = gopt.constant dense<0.0> : tensor<f16>
  // expected-remark @below {{placed on cpu: pinned to gpu, moved (soft placement): gru on CUDA is f32 only}}
  %y, %h = gopt.gru %x, %w, %r, %z, %z {device = "gpu", hidden_size = 16 : i64, linear_before_reset = true} : (tensor<4x2x8xf16>, tensor<1x48x8xf16>, tensor<1x48x16xf16>, tensor<f16>, tensor<f16>) -> (tensor<4x1x2x16xf16>, tensor<1x2x16xf16>)
  return %y : tensor<4x1x2x16xf16>
}
