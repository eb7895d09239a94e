"""Writes Resize-10 and Upsample-7/9 models and an input into argv[1], for
test/Import/onnx-resize-legacy-ort.test (ONNX Runtime is the oracle: the
node suite has no cases of these opsets)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, op, opset, mode, scales, attr=False):
    inits = []
    if attr:
        node = helper.make_node(op, ["x"], ["y"], mode=mode, scales=scales)
    else:
        inits = [numpy_helper.from_array(np.array(scales, np.float32), "s")]
        node = helper.make_node(op, ["x", "s"], ["y"], mode=mode)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 6
    onnx.save(model, os.path.join(out, name + ".onnx"))


save("resize10_nearest_down", "Resize", 10, "nearest", [1, 1, 0.6, 0.5])
save("resize10_nearest_up", "Resize", 10, "nearest", [1, 1, 2.5, 1.5])
save("resize10_linear_down", "Resize", 10, "linear", [1, 1, 0.6, 0.5])
save("resize10_linear_up", "Resize", 10, "linear", [1, 1, 2.5, 1.5])
save("upsample9_linear", "Upsample", 9, "linear", [1, 1, 2.0, 3.0])
save("upsample9_nearest", "Upsample", 9, "nearest", [1, 1, 2.0, 3.0])
save("upsample7_nearest", "Upsample", 7, "nearest", [1.0, 1.0, 2.0, 3.0], attr=True)
np.save(os.path.join(out, "x.npy"),
        np.random.default_rng(1).standard_normal((1, 2, 5, 7)).astype(np.float32))
