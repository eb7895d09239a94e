"""ONNX Slice forms for onnx-slice.test: constant negative steps (a backward
gopt.slice), negative bounds and a negative step on a dynamic dimension
(resolved at run time), with numpy's results."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F = TensorProto.FLOAT


def save(name, x_shape, starts, ends, axes, steps):
    inits = [numpy_helper.from_array(np.array(v, np.int64), n)
             for n, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))]
    g = helper.make_graph([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="cut")],
                          name, [helper.make_tensor_value_info("x", F, x_shape)],
                          [helper.make_tensor_value_info("y", F, [None] * len(x_shape))], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


x = np.arange(30, dtype=np.float32).reshape(5, 6)
np.save(os.path.join(out, "x.npy"), x)
# Every other column backwards from the last, and rows 3 down to 1.
save("negative_steps", [5, 6], [-1, 3], [-9223372036854775807, 0], [1, 0], [-2, -1])
np.save(os.path.join(out, "negative_steps_y.npy"), x[3:0:-1, ::-2])
# The last two rows of a dynamic number of rows.
save("negative_dynamic", [None, 6], [-2], [9223372036854775807], [0], [1])
np.save(os.path.join(out, "negative_dynamic_y.npy"), x[-2:])
# Rows backwards from the second last, every second one, of a dynamic
# number of rows (the end, far below -dim, clamps to before row 0).
save("backward_dynamic", [None, 6], [-2], [-100], [0], [-2])
np.save(os.path.join(out, "backward_dynamic_y.npy"), x[-2::-2])
