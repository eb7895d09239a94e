"""Writes ONNX LSTM / GRU / RNN models that cover what the node suite does
not (variable sequence lengths, reverse and bidirectional directions,
layout 1, clip, input_forget, peepholes, linear_before_reset, initial
states) and their input into the directory given. ONNX Runtime is the
oracle (the test runs it). Weights and sequence_lens are initializers, so
x is the only input. ONNX Runtime has no layout 1, so each layout-1 model
has a twin, NAME_oracle.onnx: the same layer in layout 0 between
transposes, for ONNX Runtime to run."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
S, B, I, H = 4, 3, 5, 6


def f32(name, shape, scale=0.5):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def write(name, nodes, x_shape, outputs, inits, output_shapes):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape)
         for o, shape in zip(outputs, output_shapes)], inits)
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def save(name, op, gates, directions, attrs, extra_inputs, layout=0):
    inits = [f32("W", [directions, gates * H, I]),
             f32("R", [directions, gates * H, H]),
             f32("B", [directions, 2 * gates * H])]
    names = {"sequence_lens": "", "initial_h": "", "initial_c": "", "P": ""}
    for input_name, tensor in extra_inputs.items():
        inits.append(tensor)
        names[input_name] = tensor.name
    inputs = ["x", "W", "R", "B", names["sequence_lens"], names["initial_h"]]
    if op == "LSTM":
        inputs += [names["initial_c"], names["P"]]
    while not inputs[-1]:
        inputs.pop()
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, inputs, outputs, hidden_size=H,
                            **({"layout": 1} if layout else {}), **attrs)
    d = directions
    shapes = [[B, S, d, H], [B, d, H], [B, d, H]] if layout else \
        [[S, d, B, H], [d, B, H], [d, B, H]]
    write(name, [node], [B, S, I] if layout else [S, B, I], outputs, inits,
          shapes)
    if not layout:
        return
    # The twin: states batch-major -> sequence-major, the layer in layout 0,
    # results back to batch-major.
    twin_inits = []
    for t in inits:
        a = numpy_helper.to_array(t)
        if t.name in (names["initial_h"], names["initial_c"]):
            a = a.transpose(1, 0, 2)
        twin_inits.append(numpy_helper.from_array(np.ascontiguousarray(a),
                                                  t.name))
    seq_outputs = [o + "_seq" for o in outputs]
    nodes = [helper.make_node("Transpose", ["x"], ["x_seq"], perm=[1, 0, 2]),
             helper.make_node(op, ["x_seq"] + inputs[1:], seq_outputs,
                              hidden_size=H, **attrs)]
    for o, seq in zip(outputs, seq_outputs):
        perm = [2, 0, 1, 3] if o == "y" else [1, 0, 2]
        nodes.append(helper.make_node("Transpose", [seq], [o], perm=perm))
    write(name + "_oracle", nodes, [B, S, I], outputs, twin_inits, shapes)


lens = numpy_helper.from_array(np.array([4, 1, 3], dtype=np.int32), "lens")
state = lambda name, d: f32(name, [d, B, H])  # noqa: E731

# LSTM, bidirectional, variable lengths, initial states, peepholes, clip.
save("lstm_bidi_lens", "LSTM", 4, 2, {"direction": "bidirectional",
                                      "clip": 0.8},
     {"sequence_lens": lens, "initial_h": state("h0", 2),
      "initial_c": state("c0", 2), "P": f32("P", [2, 3 * H])})
# LSTM, reverse, input_forget, layout 1 (initial states batch-major).
save("lstm_reverse_forget_layout1", "LSTM", 4, 1,
     {"direction": "reverse", "input_forget": 1},
     {"initial_h": f32("h0", [B, 1, H]), "initial_c": f32("c0", [B, 1, H])},
     layout=1)
# GRU, linear_before_reset 0 and 1, bidirectional with lengths.
for lbr in (0, 1):
    save(f"gru_bidi_lens_lbr{lbr}", "GRU", 3, 2,
         {"direction": "bidirectional", "linear_before_reset": lbr},
         {"sequence_lens": lens, "initial_h": state("h0", 2)})
# GRU, reverse, layout 1, clip.
save("gru_reverse_layout1", "GRU", 3, 1,
     {"direction": "reverse", "clip": 0.5, "linear_before_reset": 1}, {},
     layout=1)
# RNN, bidirectional with lengths and an initial state.
save("rnn_bidi_lens", "RNN", 1, 2, {"direction": "bidirectional"},
     {"sequence_lens": lens, "initial_h": state("h0", 2)})

np.save(os.path.join(out, "x.npy"),
        rng.standard_normal([S, B, I]).astype(np.float32))
np.save(os.path.join(out, "x_layout1.npy"),
        rng.standard_normal([B, S, I]).astype(np.float32))
