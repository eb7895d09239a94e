"""Writes the models of test/Import/onnx-signal-errors.test into argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name))


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype), name)


save("dft_inverse_onesided.onnx",
     [helper.make_node("DFT", ["x"], ["y"], name="dft", inverse=1, onesided=1)],
     [vi("x", [1, 8, 1])], [vi("y", ["a", "b", "c"])])
save("stft_dynamic_step.onnx",
     [helper.make_node("STFT", ["x", "step"], ["y"], name="stft")],
     [vi("x", [1, 64, 1]), vi("step", [], TensorProto.INT64)], [vi("y", ["a", "b", "c", "d"])])
save("mel_double.onnx",
     [helper.make_node("MelWeightMatrix", ["n", "l", "r", "lo", "hi"], ["y"],
                       name="mel", output_datatype=TensorProto.DOUBLE)],
     [], [vi("y", ["a", "b"], TensorProto.DOUBLE)],
     [const("n", 8, np.int64), const("l", 16, np.int64),
      const("r", 8192, np.int64), const("lo", 0.0), const("hi", 4096.0)])
roi_inputs = [vi("x", [1, 2, 8, 8]), vi("rois", [3, 4]),
              vi("b", [3], TensorProto.INT64)]
save("roi_align_min.onnx",
     [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], name="roi",
                       mode="min")],
     roi_inputs, [vi("y", ["a", "b", "c", "d"])], opset=16)
save("roi_align_10.onnx",
     [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], name="roi",
                       output_height=2, output_width=3)],
     roi_inputs, [vi("y", ["a", "b", "c", "d"])], opset=10)
save("grid_sample_linear.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs",
                       mode="linear")],
     [vi("x", [1, 2, 8, 8]), vi("g", [1, 4, 4, 2])], [vi("y", ["a", "b", "c", "d"])], opset=16)
save("grid_sample_20.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs",
                       mode="cubic")],
     [vi("x", [1, 2, 8, 8]), vi("g", [1, 4, 4, 2])],
     [vi("y", ["a", "b", "c", "d"])], opset=20)
save("grid_sample_3d.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs")],
     [vi("x", [1, 2, 4, 8, 8]), vi("g", [1, 4, 4, 4, 3])],
     [vi("y", ["a", "b", "c", "d", "e"])], opset=20)
save("grid_sample_4d.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs")],
     [vi("x", [1, 2, 2, 4, 8, 8]), vi("g", [1, 2, 4, 4, 4, 4])],
     [vi("y", ["a", "b", "c", "d", "e", "f"])], opset=20)
save("grid_sample_16_3d.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs")],
     [vi("x", [1, 2, 4, 8, 8]), vi("g", [1, 4, 4, 4, 3])],
     [vi("y", ["a", "b", "c", "d", "e"])], opset=16)
save("grid_sample_grid_rank.onnx",
     [helper.make_node("GridSample", ["x", "g"], ["y"], name="gs")],
     [vi("x", [1, 2, 4, 8, 8]), vi("g", [1, 4, 4, 2])],
     [vi("y", ["a", "b", "c", "d", "e"])], opset=20)
