//===- GoptRnnOps.td - Recurrent ops ------------------------*- tablegen -*-===//
//
// ONNX's recurrent layers: lstm, gru and rnn (tanh), sequence-major
// (ONNX layout 0; the importer transposes layout 1). Included by GoptOps.td.
//
// Operands and results follow ONNX's: `w` [D, G*H, I], `r` [D, G*H, H] with
// G gate blocks in ONNX's gate order, `b` [D, 2*G*H] (input then recurrent
// biases), `initial_h` [D, B, H]; D is 2 for "bidirectional", else 1. `b`,
// `initial_h`, `initial_c` and `p` may also be rank-0, one value broadcast
// to the whole operand: the importer passes 0 for an ONNX input that is
// absent, which needs no batch size (it may be dynamic). `sequence_lens`
// ([B], each in [0, S]) is optional; without it every sequence has all S
// steps. Steps past a sequence's length give zeros in `y`, and its final
// state is the one after its last step. `clip` > 0 clips the gates' inputs
// to [-clip, clip]; 0 does not clip.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTRNNOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTRNNOPS_TD

def Gopt_RnnDirectionAttr
    : Gopt_StrEnumAttr<["forward", "reverse", "bidirectional"], "forward">;
def Gopt_SequenceLengthsTensor : RankedTensorOf<[I32, I64]>;

def Gopt_LstmOp : Gopt_InferredOp<"lstm", [Pure, Gopt_Differentiable]> {
  let summary = "long short-term memory layer (ONNX LSTM)";
  let description = [{
    ONNX's `LSTM` with its default activations (sigmoid for the gates, tanh
    for the cell input and output). Gate blocks of `w`, `r` and `b` are in
    ONNX's order i, o, f, c; `p` [D, 3*H] holds the peepholes of i, o and f.
    Per step t (forward, or from the last step back for "reverse"):

    ```
    i = sigmoid(x_t W_i^T + h R_i^T + Wb_i + Rb_i + p_i * c)
    f = sigmoid(x_t W_f^T + h R_f^T + Wb_f + Rb_f + p_f * c)   (1 - i with input_forget)
    g = tanh(x_t W_c^T + h R_c^T + Wb_c + Rb_c)
    c = f * c + i * g
    o = sigmoid(x_t W_o^T + h R_o^T + Wb_o + Rb_o + p_o * c)
    h = o * tanh(c)
    ```

    `y` [S, D, B, H] holds every step's h, `y_h` and `y_c` [D, B, H] the
    final h and c.

    ```mlir
    %y, %y_h, %y_c = gopt.lstm %x, %w, %r, %b, %h0, %c0, %p {hidden_size = 64 : i64, direction = "bidirectional"}
        : (tensor<10x?x32xf32>, tensor<2x256x32xf32>, tensor<2x256x64xf32>, tensor<2x512xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
        -> (tensor<10x2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h, Gopt_FloatTensor:$initial_c,
                   Gopt_FloatTensor:$p,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip,
                   DefaultValuedAttr<BoolAttr, "false">:$input_forget);
  let results = (outs Gopt_FloatTensor:$y, Gopt_FloatTensor:$y_h,
                 Gopt_FloatTensor:$y_c);
  // The weights, biases and peepholes (a rank-0 absent one is not lifted).
  let trainableOperands = [1, 2, 3, 6];
  let runtimeShapeFunction = "lstmShape";
  let flopFunction = "recurrentFlops";
}

def Gopt_GruOp : Gopt_InferredOp<"gru", [Pure, Gopt_Differentiable]> {
  let summary = "gated recurrent unit layer (ONNX GRU)";
  let description = [{
    ONNX's `GRU` with its default activations (sigmoid, tanh). Gate blocks
    of `w`, `r` and `b` are in ONNX's order z, r, h. Per step:

    ```
    z = sigmoid(x_t W_z^T + h R_z^T + Wb_z + Rb_z)
    r = sigmoid(x_t W_r^T + h R_r^T + Wb_r + Rb_r)
    n = tanh(x_t W_h^T + (r * h) R_h^T + Rb_h + Wb_h)      linear_before_reset = false
    n = tanh(x_t W_h^T + r * (h R_h^T + Rb_h) + Wb_h)      linear_before_reset = true
    h = (1 - z) * n + z * h
    ```

    ```mlir
    %y, %y_h = gopt.gru %x, %w, %r, %b, %h0 {hidden_size = 5 : i64, linear_before_reset = true}
        : (tensor<1x3x2xf32>, tensor<1x15x2xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<f32>)
        -> (tensor<1x1x3x5xf32>, tensor<1x3x5xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip,
                   DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset);
  let results = (outs Gopt_FloatTensor:$y, Gopt_FloatTensor:$y_h);
  let trainableOperands = [1, 2, 3];
  let runtimeShapeFunction = "gruShape";
  let flopFunction = "recurrentFlops";
}

def Gopt_RnnOp : Gopt_InferredOp<"rnn", [Pure, Gopt_Differentiable]> {
  let summary = "simple recurrent layer, tanh (ONNX RNN)";
  let description = [{
    ONNX's `RNN` with its default activation:
    `h = tanh(x_t W^T + h R^T + Wb + Rb)` per step.

    ```mlir
    %y, %y_h = gopt.rnn %x, %w, %r, %b, %h0 {hidden_size = 4 : i64}
        : (tensor<1x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<1x1x3x4xf32>, tensor<1x3x4xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip);
  let results = (outs Gopt_FloatTensor:$y, Gopt_FloatTensor:$y_h);
  let trainableOperands = [1, 2, 3];
  let runtimeShapeFunction = "rnnShape";
  let flopFunction = "recurrentFlops";
}

//===----------------------------------------------------------------------===//
// Gradients (backpropagation through time)
//
// Each takes its forward op's operands and attributes, then the gradients
// of the forward's results (`dy` [S, D, B, H], `dy_h`, `dy_c` [D, B, H];
// each may be rank-0, one value broadcast: autodiff passes 0 for a result
// the loss does not use), and gives the gradient of every float operand,
// each of its operand's shape (summed to one value for a rank-0 operand).
// The kernel recomputes the forward's gates rather than reading saved ones
// (docs/architecture.md, "Decisions and why"). Steps past a sequence's
// length get and give nothing; clipped gate inputs pass no gradient.
//===----------------------------------------------------------------------===//

def Gopt_LstmGradOp : Gopt_InferredOp<"lstm_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of lstm with respect to its float operands";
  let description = [{
    Backpropagation through time of `gopt.lstm` with the same attributes:
    the gradients of x, w, r, b, initial_h, initial_c and p from those of
    y, y_h and y_c.

    ```mlir
    %dx, %dw, %dr, %db, %dh0, %dc0, %dp = gopt.lstm_grad %x, %w, %r, %b, %h0, %c0, %p, %dy, %dyh, %dyc {hidden_size = 3 : i64}
        : (tensor<4x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4x1x2x3xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<4x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h, Gopt_FloatTensor:$initial_c,
                   Gopt_FloatTensor:$p, Gopt_FloatTensor:$dy,
                   Gopt_FloatTensor:$dy_h, Gopt_FloatTensor:$dy_c,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip,
                   DefaultValuedAttr<BoolAttr, "false">:$input_forget);
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dw,
                 Gopt_FloatTensor:$dr, Gopt_FloatTensor:$db,
                 Gopt_FloatTensor:$d_initial_h, Gopt_FloatTensor:$d_initial_c,
                 Gopt_FloatTensor:$dp);
  let runtimeShapeFunction = "lstmGradShape";
}

def Gopt_GruGradOp : Gopt_InferredOp<"gru_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of gru with respect to its float operands";
  let description = [{
    Backpropagation through time of `gopt.gru` with the same attributes
    (both `linear_before_reset` forms): the gradients of x, w, r, b and
    initial_h from those of y and y_h.

    ```mlir
    %dx, %dw, %dr, %db, %dh0 = gopt.gru_grad %x, %w, %r, %b, %h0, %dy, %dyh {hidden_size = 3 : i64}
        : (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>, tensor<4x1x2x3xf32>, tensor<1x2x3xf32>)
        -> (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h, Gopt_FloatTensor:$dy,
                   Gopt_FloatTensor:$dy_h,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip,
                   DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset);
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dw,
                 Gopt_FloatTensor:$dr, Gopt_FloatTensor:$db,
                 Gopt_FloatTensor:$d_initial_h);
  let runtimeShapeFunction = "gruGradShape";
}

def Gopt_RnnGradOp : Gopt_InferredOp<"rnn_grad", [Pure]> {
  let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
  let summary = "gradient of rnn with respect to its float operands";
  let description = [{
    Backpropagation through time of `gopt.rnn` with the same attributes:
    the gradients of x, w, r, b and initial_h from those of y and y_h.

    ```mlir
    %dx, %dw, %dr, %db, %dh0 = gopt.rnn_grad %x, %w, %r, %b, %h0, %dy, %dyh {hidden_size = 4 : i64}
        : (tensor<1x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<f32>, tensor<f32>, tensor<1x1x3x4xf32>, tensor<f32>)
        -> (tensor<1x3x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<f32>, tensor<f32>)
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$w,
                   Gopt_FloatTensor:$r, Gopt_FloatTensor:$b,
                   Gopt_FloatTensor:$initial_h, Gopt_FloatTensor:$dy,
                   Gopt_FloatTensor:$dy_h,
                   Optional<Gopt_SequenceLengthsTensor>:$sequence_lens,
                   I64Attr:$hidden_size,
                   Gopt_RnnDirectionAttr:$direction,
                   DefaultValuedAttr<F32Attr, "0.0f">:$clip);
  let results = (outs Gopt_FloatTensor:$dx, Gopt_FloatTensor:$dw,
                 Gopt_FloatTensor:$dr, Gopt_FloatTensor:$db,
                 Gopt_FloatTensor:$d_initial_h);
  let runtimeShapeFunction = "rnnGradShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTRNNOPS_TD
