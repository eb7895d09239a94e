"""Writes mish.mlir, mish.onnx (opset 18), x.npy and y.npy (numpy's Mish of
x, in double) into the directory given."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper


def model(node):
    graph = helper.make_graph(
        [node], "mish",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m.SerializeToString()


out = sys.argv[1]
with open(os.path.join(out, "mish.onnx"), "wb") as f:
    f.write(model(helper.make_node("Mish", ["x"], ["y"])))
with open(os.path.join(out, "mish.mlir"), "w") as f:
    f.write('func.func @main(%x: tensor<2x5xf32> {gopt.name = "x"}) -> '
            '(tensor<2x5xf32> {gopt.name = "y"}) {\n'
            '  %y = gopt.mish %x : (tensor<2x5xf32>) -> tensor<2x5xf32>\n'
            '  return %y : tensor<2x5xf32>\n}\n')
x = np.array([[-30.0, -3.0, -0.5, 0.0, 0.25],
              [0.5, 1.0, 3.0, 20.0, 90.0]], dtype=np.float32)
y = (x.astype(np.float64) * np.tanh(np.logaddexp(0.0, x.astype(np.float64))))
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), y.astype(np.float32))
