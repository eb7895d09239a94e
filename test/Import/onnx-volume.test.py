"""Writes ONNX models of 3-D windows into the directory given, with inputs
and numpy's expected outputs as .npy: global pools over rank 5, a 3-D Conv
with auto_pad SAME_LOWER, a chain of all four 3-D ops (for the export round
trip), a dilated 1-D MaxPool with SAME_UPPER, and a Conv over rank 6 (an
import error)."""
import itertools
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def save(name, nodes, inputs, outputs, inits=(), rank=5):
    """Outputs of `rank` with unnamed sizes: ONNX's shape inference fills
    them in."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in inputs],
        [helper.make_tensor_value_info(
            n, TensorProto.FLOAT, ["%s_%d" % (n, i) for i in range(rank)])
         for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def npy(name, value):
    np.save(os.path.join(out, name + ".npy"), value.astype(np.float32))


# Global pools over [N, C, D, H, W].
x = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
save("global", [helper.make_node("GlobalAveragePool", ["x"], ["avg"]),
                helper.make_node("GlobalMaxPool", ["x"], ["max"])],
     [("x", x.shape)], ["avg", "max"])
npy("global_x", x)
npy("global_avg", x.mean(axis=(2, 3, 4), keepdims=True))
npy("global_max", x.max(axis=(2, 3, 4), keepdims=True))


def conv3d(x, w, strides, pads_begin, out_shape):
    """Direct 3-D convolution, zero padding before each dim as given."""
    n, c = x.shape[:2]
    y = np.zeros((n, w.shape[0]) + tuple(out_shape))
    for o in itertools.product(*[range(s) for s in out_shape]):
        for k in itertools.product(*[range(s) for s in w.shape[2:]]):
            pos = [o[i] * strides[i] - pads_begin[i] + k[i] for i in range(3)]
            if all(0 <= pos[i] < x.shape[2 + i] for i in range(3)):
                v = x[:, :, pos[0], pos[1], pos[2]]
                y[(slice(None), slice(None)) + o] += v @ w[:, :, k[0], k[1],
                                                           k[2]].T
    return y


# SAME_LOWER: out = ceil(in / stride), the odd padding at the beginning.
x = rng.standard_normal((1, 2, 5, 6, 4)).astype(np.float32)
w = rng.standard_normal((3, 2, 2, 3, 2)).astype(np.float32)
strides = [2, 2, 1]
out_shape = [3, 3, 4]
pads_begin = []
for i in range(3):
    total = max((out_shape[i] - 1) * strides[i] + w.shape[2 + i] - x.shape[2 + i], 0)
    pads_begin.append(total - total // 2)
save("same_lower",
     [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER",
                       strides=strides)],
     [("x", x.shape)], ["y"], [("w", w)])
npy("same_lower_x", x)
npy("same_lower_y", conv3d(x, w, strides, pads_begin, out_shape))

# All four 3-D ops in a chain; gopt's reference kernels give the expected
# values, the exported model must reproduce them.
x = rng.standard_normal((1, 4, 6, 7, 8)).astype(np.float32)
save("chain",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 0, 1, 1, 0, 1],
                       strides=[1, 2, 1], dilations=[1, 1, 2], group=2),
      helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2, 2, 2],
                       dilations=[1, 2, 1], ceil_mode=1, strides=[2, 1, 2]),
      helper.make_node("ConvTranspose", ["m", "wt", "bt"], ["t"],
                       strides=[2, 2, 1], pads=[1, 0, 0, 0, 1, 0],
                       output_padding=[1, 1, 0], group=3),
      helper.make_node("AveragePool", ["t"], ["y"], kernel_shape=[3, 2, 2],
                       pads=[1, 1, 0, 1, 0, 1], count_include_pad=1)],
     [("x", x.shape)], ["y"],
     [("w", rng.standard_normal((6, 2, 3, 2, 3)).astype(np.float32)),
      ("b", rng.standard_normal(6).astype(np.float32)),
      ("wt", rng.standard_normal((6, 2, 2, 3, 2)).astype(np.float32)),
      ("bt", rng.standard_normal(6).astype(np.float32))])
npy("chain_x", x)

# A dilated 1-D MaxPool with SAME_UPPER (as max_pool3d over [N, C, 1, 1, L]).
x = rng.standard_normal((2, 3, 11)).astype(np.float32)
save("dilated_1d",
     [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3],
                       dilations=[2], strides=[2], auto_pad="SAME_UPPER")],
     [("x", x.shape)], ["y"], rank=3)
npy("dilated_1d_x", x)
# out = ceil(11 / 2) = 6; total pad (6 - 1) * 2 + 5 - 11 = 4: 2 before.
padded = np.pad(x, ((0, 0), (0, 0), (2, 2)), constant_values=-np.inf)
npy("dilated_1d_y", np.stack([padded[:, :, 2 * o:2 * o + 5:2].max(axis=2)
                              for o in range(6)], axis=2))

# A 4-D window: no gopt op.
save("rank6",
     [helper.make_node("Conv", ["x", "w"], ["y"])],
     [("x", [1, 1, 2, 2, 2, 2])], ["y"],
     [("w", np.ones((1, 1, 1, 1, 1, 1), np.float32))], rank=6)
