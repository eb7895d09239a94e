"""Writes the models of test/Import/onnx-compose.test into argv[1]: ONNX ops
gopt imports as compositions or folds, in forms it takes and forms it
refuses."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name))


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def anyshape(name, rank, dtype=TensorProto.FLOAT):
    """An output whose dims ONNX's shape inference fills in."""
    return vi(name, [f"{name}{i}" for i in range(rank)], dtype)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype), name)


# Split: equal parts of a dynamic axis, uneven equal parts, sizes that do
# not add up; sizes of a dynamic axis are fine.
split = lambda ins, outs, **kw: [helper.make_node("Split", ins, outs, name="cut", **kw)]
save("split_dynamic.onnx", split(["x"], ["a", "b"], axis=0), [vi("x", ["n", 4])],
     [anyshape("a", 2), anyshape("b", 2)])
save("split_uneven.onnx", split(["x"], ["a", "b"], axis=1), [vi("x", [2, 5])],
     [anyshape("a", 2), anyshape("b", 2)])
save("split_sum.onnx", split(["x", "s"], ["a", "b"], axis=1), [vi("x", [2, 6])],
     [anyshape("a", 2), anyshape("b", 2)], [const("s", [2, 3])])
save("split_sizes_dynamic.onnx", split(["x", "s"], ["a", "b"], axis=0),
     [vi("x", ["n", 4])], [anyshape("a", 2), anyshape("b", 2)],
     [const("s", [1, 2])])
# Size folds only for static shapes.
save("size_dynamic.onnx", [helper.make_node("Size", ["x"], ["y"], name="count")],
     [vi("x", ["n", 4])], [vi("y", [], TensorProto.INT64)])
# ConstantOfShape of a shape computed from a static shape folds; Range of
# constants folds and feeds a Reshape as a constant.
save("constant_of_shape.onnx",
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill",
                       value=numpy_helper.from_array(np.array([7], np.int32)))],
     [vi("x", [2, 3])], [anyshape("y", 2, TensorProto.INT32)])
save("range_reshape.onnx",
     [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="steps"),
      helper.make_node("Reshape", ["x", "r"], ["y"])],
     [vi("x", [24])], [anyshape("y", 3)],
     [const("start", 2), const("limit", 5), const("delta", 1)])
save("range_zero_delta.onnx",
     [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="steps")],
     [], [anyshape("r", 1, TensorProto.INT64)],
     [const("start", 0), const("limit", 5), const("delta", 0)])
# DepthToSpace needs channels that are a multiple of blocksize^2, and a
# known mode.
save("depth_to_space_channels.onnx",
     [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)],
     [vi("x", [1, 6, 2, 2])], [anyshape("y", 4)])
save("space_to_depth_rows.onnx",
     [helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=2)],
     [vi("x", [1, 1, 3, 4])], [anyshape("y", 4)])
save("depth_to_space_batch.onnx",
     [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2,
                       mode="CRD")],
     [vi("x", ["n", 8, 2, 3])], [anyshape("y", 4)])
# Shrink and Mean of integers are not in gopt.
save("shrink_int.onnx", [helper.make_node("Shrink", ["x"], ["y"], name="sh")],
     [vi("x", [3], TensorProto.INT32)], [anyshape("y", 1, TensorProto.INT32)])
save("mean_int.onnx", [helper.make_node("Mean", ["x", "x"], ["y"], name="avg")],
     [vi("x", [3], TensorProto.INT32)], [anyshape("y", 1, TensorProto.INT32)])
# Hardmax along a dynamic axis cannot build its index constant.
save("hardmax_dynamic.onnx", [helper.make_node("Hardmax", ["x"], ["y"], name="hm")],
     [vi("x", [2, "n"])], [anyshape("y", 2)])
# Trilu builds its mask for static rows and columns only.
save("trilu_dynamic.onnx", [helper.make_node("Trilu", ["x"], ["y"], name="tri")],
     [vi("x", [3, "n"])], [anyshape("y", 2)], opset=14)
# Shape's start and end slice the dims; an integer Neg is 0 - x.
save("shape_slice.onnx",
     [helper.make_node("Shape", ["x"], ["s"], name="dims", start=1, end=-1),
      helper.make_node("Neg", ["s"], ["y"], name="negate")],
     [vi("x", [2, 3, 4, 5])], [anyshape("y", 1, TensorProto.INT64)], opset=15)
