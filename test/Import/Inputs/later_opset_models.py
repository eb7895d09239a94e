"""What the tests that write ONNX models of opsets 18-21 share: the python
onnx here (1.12) knows opsets up to 17, so the opset import is set by hand
and nothing runs onnx.checker. `Writer(out)` saves models and .npy arrays
into the directory `out`."""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper


class Writer:
    def __init__(self, out):
        self.out = out

    def save(self, name, nodes, inputs, outputs, opset, initializers=(),
             ir_version=8):
        graph = helper.make_graph(nodes, name, inputs, outputs,
                                  initializer=list(initializers))
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = ir_version
        with open(os.path.join(self.out, name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())

    def npy(self, name, array):
        np.save(os.path.join(self.out, name + ".npy"), array)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)
