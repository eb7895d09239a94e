"""Writes the ONNX models and arrays of onnx-indexing.test into the directory
given: shape chains as torchvision exports them, CumSum in f32 with
numpy's result, and graphs the importer or runtime must reject."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


# x.view(x.size(0), -1) with a dynamic batch: Shape -> Gather -> Unsqueeze
# -> Concat -> Reshape.
save("view", [
    helper.make_node("Shape", ["x"], ["s"]),
    helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
    helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
    helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
    helper.make_node("Reshape", ["x", "target"], ["y"]),
], [vi("x", ["N", 3, 2, 2])], [vi("y", ["N", 12])],
    [i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1])])

# ShuffleNet's channel shuffle: view(batch, groups, c / groups, h, w) with
# every size but the groups read from x.size().
sizes = []
nodes = [helper.make_node("Shape", ["x"], ["s"])]
for i, d in enumerate([0, 2, 3]):
    nodes += [helper.make_node("Gather", ["s", f"d{d}"], [f"g{d}"], axis=0),
              helper.make_node("Unsqueeze", [f"g{d}", "axes0"], [f"u{d}"])]
nodes += [
    helper.make_node("Concat", ["u0", "groups", "u2", "u3"], ["target"], axis=0),
    helper.make_node("Reshape", ["x", "target"], ["r"]),
    helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
    helper.make_node("Reshape", ["t", "back"], ["y"]),
]
save("shuffle", nodes, [vi("x", ["N", 6, 2, 2])], [vi("y", ["N", 6, 2, 2])],
     [i64("d0", 0), i64("d2", 2), i64("d3", 3), i64("axes0", [0]),
      i64("groups", [2, 3]), i64("back", [0, 6, 2, 2])])

# CumSum in f32 (the node suite's cases are f64), both directions.
x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) * np.float32(0.5)
np.save(os.path.join(out, "x.npy"), x)
save("cumsum", [
    helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1, reverse=1),
], [vi("x", [3, 4])], [vi("y", [3, 4])], [i64("axis", -1)])
rev = np.flip(np.cumsum(np.flip(x, 1), axis=1), 1) - x
np.save(os.path.join(out, "cumsum.npy"), rev.astype(np.float32))

# TopK with a constant K, smallest first along axis 0, and its export.
save("topk", [
    helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0),
], [vi("x", [3, 4])], [vi("v", [2, 4]), vi("i", [2, 4], TensorProto.INT64)],
    [i64("k", [2])], opset=11)
order = np.argsort(x, axis=0, kind="stable")[:2]
np.save(os.path.join(out, "topk_v.npy"), np.take_along_axis(x, order, axis=0))
np.save(os.path.join(out, "topk_i.npy"), order.astype(np.int64))

# Errors: an axis computed at run time, and an index out of range.
save("cumsum_axis_input", [
    helper.make_node("CumSum", ["x", "axis"], ["y"]),
], [vi("x", [3, 4]), vi("axis", [], TensorProto.INT64)], [vi("y", [3, 4])])
save("gather_oob", [
    helper.make_node("Gather", ["x", "idx"], ["y"], axis=1),
], [vi("x", [3, 4])], [vi("y", [3, 2])],
    [numpy_helper.from_array(np.array([1, 4], dtype=np.int32), "idx")])
