"""Writes the bad models of test/Import/onnx-image-errors.test into argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, inputs, inits=(), rank=4, opset=13):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list("abcd")[:rank])],
                              initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name))


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype), name)


resize = lambda ins: [helper.make_node("Resize", ins, ["y"], name="up")]
save("resize_channels.onnx", resize(["x", "", "s"]), [vi("x", [1, 2, 4, 4])],
     [const("s", [1, 2, 2, 2])])
save("resize_rank3.onnx", resize(["x", "", "s"]), [vi("x", [1, 2, 4])],
     [const("s", [1, 1, 2])], rank=3)
save("resize_dynamic_scales.onnx", resize(["x", "", "s"]),
     [vi("x", [1, 2, 4, 4]), vi("s", [4])])
# Run-time scales import as gopt.dynamic_resize; these scale C, which the
# session refuses when it resolves shapes.
np.save(os.path.join(out, "x.npy"), np.ones((1, 2, 4, 4), np.float32))
np.save(os.path.join(out, "s_channels.npy"), np.array([1, 2, 2, 2], np.float32))
save("resize10_nearest_dynamic.onnx", resize(["x", "s"]),
     [vi("x", [1, 2, 4, 4]), vi("s", [4])], opset=10)
save("resize_both.onnx", resize(["x", "", "s", "z"]), [vi("x", [1, 2, 4, 4])],
     [const("s", [1, 1, 2, 2]), const("z", [1, 2, 8, 8], np.int64)])
deconv = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="deconv")]
save("deconv_1d.onnx", deconv, [vi("x", [1, 2, 5])],
     [const("w", np.ones((2, 3, 3)))], rank=3)
save("deconv_channels.onnx", deconv, [vi("x", [1, 2, 5, 5])],
     [const("w", np.ones((3, 1, 3, 3)))])
