"""An If inside a Loop body for export-onnx-control-flow.test: the If's
branches read the body's values and a graph input two scopes out, so the
export must write outer-scope names through nested subgraphs."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value, dtype), name + "_v"))


# Even iterations add the row scaled by w, odd ones subtract it.
then_g = helper.make_graph([
    helper.make_node("Mul", ["row", "w"], ["scaled"], name="scale"),
    helper.make_node("Add", ["acc_in", "scaled"], ["next_then"], name="add_row"),
], "even", [], [helper.make_tensor_value_info("next_then", F, [3])])
else_g = helper.make_graph([
    helper.make_node("Sub", ["acc_in", "row"], ["next_else"], name="sub_row"),
], "odd", [], [helper.make_tensor_value_info("next_else", F, [3])])
body = helper.make_graph([
    helper.make_node("Gather", ["xs", "i"], ["row"], name="row", axis=0),
    const("two", 2),
    const("zero", 0),
    helper.make_node("Mod", ["i", "two"], ["parity"], name="parity"),
    helper.make_node("Equal", ["parity", "zero"], ["even"], name="is_even"),
    helper.make_node("If", ["even"], ["acc_out"], name="even_or_odd",
                     then_branch=then_g, else_branch=else_g),
    helper.make_node("Identity", ["c_in"], ["c_out"], name="keep_going"),
    helper.make_node("Identity", ["acc_out"], ["scan"], name="partial"),
], "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
            helper.make_tensor_value_info("acc_in", F, [3])],
    [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("acc_out", F, [3]),
     helper.make_tensor_value_info("scan", F, [3])])
g = helper.make_graph([
    const("trips", 4),
    helper.make_node("Loop", ["trips", "", "zeros"], ["total", "partials"], name="alternate", body=body),
], "nested", [helper.make_tensor_value_info("xs", F, [4, 3]), helper.make_tensor_value_info("w", F, [3])],
    [helper.make_tensor_value_info("total", F, [3]), helper.make_tensor_value_info("partials", F, [4, 3])],
    initializer=[numpy_helper.from_array(np.zeros(3, np.float32), "zeros")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "nested.onnx"))

xs = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
w = np.array([0.5, 2.0, -1.0], np.float32)
acc, rows = np.zeros(3, np.float32), []
for i in range(4):
    acc = acc + xs[i] * w if i % 2 == 0 else acc - xs[i]
    rows.append(acc)
np.save(os.path.join(out, "nested_xs.npy"), xs)
np.save(os.path.join(out, "nested_w.npy"), w)
np.save(os.path.join(out, "nested_total.npy"), acc)
np.save(os.path.join(out, "nested_partials.npy"), np.stack(rows))
