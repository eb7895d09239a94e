"""Dropout as PyTorch's training-mode export writes it: training_mode true,
the mask output named though nothing reads it."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
g = helper.make_graph(
    [helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"],
                      name="drop")],
    "training_dropout",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])],
    initializer=[numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
                 numpy_helper.from_array(np.array(True), "training")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "training_dropout.onnx"))
