"""ShuffleNet's channel shuffle as torch.onnx.export writes it with a dynamic
batch: x.view(n, g, c // g, h, w).transpose(1, 2).reshape(n, -1, h, w), the
batch read from the *input's* shape (Shape -> Gather -> Unsqueeze -> Concat)
beside a literal -1. Writes the model, an input of batch 3 and numpy's
result."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
N, G, C, H, W = 3, 2, 6, 4, 5
ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
nodes = [
    helper.make_node("Shape", ["x"], ["x_shape"]),
    helper.make_node("Gather", ["x_shape", "zero"], ["n"], axis=0),
    helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"]),
    helper.make_node("Concat", ["n1", "split_tail"], ["split_shape"], axis=0),
    helper.make_node("Reshape", ["x", "split_shape"], ["split"]),
    helper.make_node("Transpose", ["split"], ["swapped"], perm=[0, 2, 1, 3, 4]),
    helper.make_node("Concat", ["n1", "merge_tail"], ["merge_shape"], axis=0),
    helper.make_node("Reshape", ["swapped", "merge_shape"], ["y"], name="merge"),
]
g = helper.make_graph(
    nodes, "channel_shuffle",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", C, H, W])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", C, H, W])],
    initializer=[ints("zero", 0), ints("axis0", [0]),
                 ints("split_tail", [G, C // G, H, W]),
                 ints("merge_tail", [-1, H, W])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "channel_shuffle.onnx"))
x = np.random.default_rng(0).random((N, C, H, W), dtype=np.float32)
np.save(os.path.join(out, "x.npy"), x)
y = x.reshape(N, G, C // G, H, W).transpose(0, 2, 1, 3, 4).reshape(N, -1, H, W)
np.save(os.path.join(out, "y.npy"), y)
