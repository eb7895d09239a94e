"""Writes ONNX recurrent nodes gopt does not take into the directory given:
a non-default activation, a bad layout, and a sequence length past the
sequence (a run-time error)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, node_inputs, attrs, inits=()):
    node = helper.make_node("LSTM", node_inputs, ["y"], name="encoder",
                            hidden_size=2, **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1, 1, 2])],
        [numpy_helper.from_array(np.ones([1, 8, 2], np.float32), "W"),
         numpy_helper.from_array(np.ones([1, 8, 2], np.float32), "R")]
        + list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


save("activations", ["x", "W", "R"],
     {"activations": ["Sigmoid", "Relu", "Tanh"]})
save("layout", ["x", "W", "R"], {"layout": 2})
save("clip", ["x", "W", "R"], {"clip": -1.0})
save("lens", ["x", "W", "R", "", "lens"], {},
     [numpy_helper.from_array(np.array([4], np.int32), "lens")])
