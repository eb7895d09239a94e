"""Writes keep.onnx / drop.onnx (ReduceLogSumExp over axes [-1, 1] of a
2x3x4 input, keepdims 1 and 0), x.npy and numpy's results in double."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper


def model(keepdims, out_shape):
    node = helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[-1, 1],
                            keepdims=keepdims)
    graph = helper.make_graph(
        [node], "lse",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m.SerializeToString()


out = sys.argv[1]
x = np.random.default_rng(5).normal(size=(2, 3, 4)).astype(np.float32)
x[0, 0, 0] = 100.0   # exp overflows f32 unshifted
x[1, :, :] -= 200.0  # exp underflows to 0 unshifted
for name, keep, shape in (("keep", 1, [2, 1, 1]), ("drop", 0, [2])):
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model(keep, shape))
    x64 = x.astype(np.float64)
    m = x64.max(axis=(1, 2), keepdims=True)
    y = np.log(np.exp(x64 - m).sum(axis=(1, 2), keepdims=True)) + m
    np.save(os.path.join(out, name + ".npy"),
            (y if keep else y.reshape(2)).astype(np.float32))
np.save(os.path.join(out, "x.npy"), x)
