"""ONNX models with If, Loop and Scan for onnx-control-flow.test, with
numpy inputs and expected outputs computed here."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value, dtype), name + "_v"))


def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)


# If on a condition computed from a static shape, as exported models have:
# rows > 2 ? relu(x) : neg(x). x is [4, 3], so the then branch is taken.
then_g = branch("then", [helper.make_node("Relu", ["x"], ["y_then"], name="r")],
                [helper.make_tensor_value_info("y_then", F, [4, 3])])
else_g = branch("else", [helper.make_node("Neg", ["x"], ["y_else"], name="n")],
                [helper.make_tensor_value_info("y_else", F, [4, 3])])
save("if_static_shape", [
    helper.make_node("Shape", ["x"], ["s"], name="shape"),
    const("zero", 0),
    helper.make_node("Gather", ["s", "zero"], ["rows"], name="rows", axis=0),
    const("two", 2),
    helper.make_node("Greater", ["rows", "two"], ["c"], name="more_than_two"),
    helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then_g, else_branch=else_g),
], [helper.make_tensor_value_info("x", F, [4, 3])], [helper.make_tensor_value_info("y", F, [4, 3])])
x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
np.save(os.path.join(out, "if_x.npy"), x)
np.save(os.path.join(out, "if_static_shape_y.npy"), np.maximum(x, 0))

# If whose condition is fed at run time: both branches scale x, by 2 or by
# -1, and the branch's own initializer is the factor.
def scale_branch(name, factor):
    return helper.make_graph(
        [helper.make_node("Mul", ["x", name + "_k"], [name + "_y"], name=name + "_mul")], name, [],
        [helper.make_tensor_value_info(name + "_y", F, [4, 3])],
        initializer=[helper.make_tensor(name + "_k", F, [], [factor])])
save("if_runtime", [
    helper.make_node("If", ["c"], ["y"], name="choose", then_branch=scale_branch("double", 2.0),
                     else_branch=scale_branch("negate", -1.0)),
], [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [4, 3])],
    [helper.make_tensor_value_info("y", F, [4, 3])])
np.save(os.path.join(out, "if_true.npy"), np.array(True))
np.save(os.path.join(out, "if_false.npy"), np.array(False))
np.save(os.path.join(out, "if_runtime_true_y.npy"), 2 * x)
np.save(os.path.join(out, "if_runtime_false_y.npy"), -x)

# Loop with a constant trip count: a running sum over the rows of x (an
# outer value the body captures), each partial sum a scan output row, and
# the iteration number cast to float added once per row.
body = helper.make_graph([
    helper.make_node("Gather", ["xs", "i"], ["row"], name="row", axis=0),
    helper.make_node("Add", ["acc_in", "row"], ["acc_out"], name="accumulate"),
    helper.make_node("Cast", ["i"], ["i_f"], name="i_float", to=F),
    helper.make_node("Add", ["acc_out", "i_f"], ["scan"], name="with_i"),
    helper.make_node("Identity", ["c_in"], ["c_out"], name="keep_going"),
], "sum_body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
                helper.make_tensor_value_info("acc_in", F, [3])],
    [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("acc_out", F, [3]),
     helper.make_tensor_value_info("scan", F, [3])])
save("loop_sum", [
    const("trips", 4),
    helper.make_node("Loop", ["trips", "", "zeros"], ["total", "partials"], name="sum_rows", body=body),
], [helper.make_tensor_value_info("xs", F, [4, 3])],
    [helper.make_tensor_value_info("total", F, [3]), helper.make_tensor_value_info("partials", F, [4, 3])],
    inits=[numpy_helper.from_array(np.zeros(3, np.float32), "zeros")])
xs = np.arange(12, dtype=np.float32).reshape(4, 3)
np.save(os.path.join(out, "loop_xs.npy"), xs)
np.save(os.path.join(out, "loop_sum_total.npy"), xs.sum(0))
np.save(os.path.join(out, "loop_sum_partials.npy"), np.cumsum(xs, 0) + np.arange(4, dtype=np.float32)[:, None])

# A loop that ends when its body says so: no scan outputs, a carried
# counter doubled until it exceeds a limit the graph feeds.
stop_body = helper.make_graph([
    helper.make_node("Add", ["v_in", "v_in"], ["v_out"], name="double"),
    helper.make_node("Less", ["v_out", "limit"], ["c_out"], name="below_limit"),
], "stop_body", [helper.make_tensor_value_info("j", I64, []), helper.make_tensor_value_info("c", B, []),
                 helper.make_tensor_value_info("v_in", F, [1])],
    [helper.make_tensor_value_info("c_out", B, [1]), helper.make_tensor_value_info("v_out", F, [1])])
save("loop_until", [
    helper.make_node("Loop", ["", "", "start"], ["v"], name="double_until", body=stop_body),
], [helper.make_tensor_value_info("start", F, [1]), helper.make_tensor_value_info("limit", F, [1])],
    [helper.make_tensor_value_info("v", F, [1])])
np.save(os.path.join(out, "loop_start.npy"), np.array([3.0], np.float32))
np.save(os.path.join(out, "loop_limit.npy"), np.array([100.0], np.float32))
np.save(os.path.join(out, "loop_until_v.npy"), np.array([192.0], np.float32))

# Errors. A loop with a scan output whose body computes its condition.
scan_until = helper.make_graph([
    helper.make_node("Add", ["w_in", "w_in"], ["w_out"], name="double"),
    helper.make_node("Less", ["w_out", "limit"], ["go"], name="below"),
], "scan_until_body", [helper.make_tensor_value_info("k", I64, []), helper.make_tensor_value_info("c", B, []),
                       helper.make_tensor_value_info("w_in", F, [1])],
    [helper.make_tensor_value_info("go", B, [1]), helper.make_tensor_value_info("w_out", F, [1]),
     helper.make_tensor_value_info("w_out", F, [1])])
save("loop_scan_computed_cond", [
    helper.make_node("Loop", ["", "", "start"], ["w", "ws"], name="scan_until", body=scan_until),
], [helper.make_tensor_value_info("start", F, [1]), helper.make_tensor_value_info("limit", F, [1])],
    [helper.make_tensor_value_info("w", F, [1]), helper.make_tensor_value_info("ws", F, [None, 1])])

# Branches of different ranks, and of different shapes.
flat = helper.make_graph([
    helper.make_node("Reshape", ["x", "flat_shape"], ["x_flat"], name="flatten")], "flat", [],
    [helper.make_tensor_value_info("x_flat", F, [12])],
    initializer=[helper.make_tensor("flat_shape", I64, [1], [12])])
same = helper.make_graph([helper.make_node("Identity", ["x"], ["x_same"], name="same")], "same", [],
                         [helper.make_tensor_value_info("x_same", F, [4, 3])])
save("if_rank_mismatch", [
    helper.make_node("If", ["c"], ["y"], name="choose", then_branch=same, else_branch=flat),
], [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [4, 3])],
    [helper.make_tensor_value_info("y", F, [None])])
rows3 = helper.make_graph([
    helper.make_node("Slice", ["x", "s0", "s3"], ["x_rows"], name="three_rows")], "rows3", [],
    [helper.make_tensor_value_info("x_rows", F, [3, 3])],
    initializer=[helper.make_tensor("s0", I64, [1], [0]), helper.make_tensor("s3", I64, [1], [3])])
save("if_shape_mismatch", [
    helper.make_node("If", ["c"], ["y"], name="choose", then_branch=same, else_branch=rows3),
], [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [4, 3])],
    [helper.make_tensor_value_info("y", F, [None, 3])])

# Scan: a running sum of x_i * w_i, with x read backwards along axis 0 and
# w read along axis 1; the partial sums are written backwards along axis 1.
scan_body = helper.make_graph([
    helper.make_node("Mul", ["x_i", "w_i"], ["prod"], name="prod"),
    helper.make_node("Add", ["acc_in", "prod"], ["acc_out"], name="acc"),
    helper.make_node("Identity", ["acc_out"], ["partial"], name="partial"),
], "scan_body", [helper.make_tensor_value_info("acc_in", F, [2]), helper.make_tensor_value_info("x_i", F, [2]),
                 helper.make_tensor_value_info("w_i", F, [2])],
    [helper.make_tensor_value_info("acc_out", F, [2]), helper.make_tensor_value_info("partial", F, [2])])


def scan_model(name, length, reverse_out):
    save(name, [
        helper.make_node("Scan", ["acc0", "x", "w"], ["acc", "partials"], name="scan", body=scan_body,
                         num_scan_inputs=2, scan_input_axes=[0, 1], scan_input_directions=[1, 0],
                         scan_output_axes=[0 if length is None else 1],
                         scan_output_directions=[1 if reverse_out else 0]),
    ], [helper.make_tensor_value_info("acc0", F, [2]), helper.make_tensor_value_info("x", F, [length, 2]),
        helper.make_tensor_value_info("w", F, [2, length])],
        [helper.make_tensor_value_info("acc", F, [2]),
         helper.make_tensor_value_info("partials", F, [length, 2] if length is None else [2, length])],
        opset=11)


scan_model("scan_static", 3, True)
scan_model("scan_dynamic", None, False)
acc0 = np.array([1.0, -1.0], np.float32)
sx = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
sw = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
acc, rows = acc0.copy(), []
for i in range(3):
    acc = acc + sx[2 - i] * sw[:, i]
    rows.append(acc.copy())
np.save(os.path.join(out, "scan_acc0.npy"), acc0)
np.save(os.path.join(out, "scan_x.npy"), sx)
np.save(os.path.join(out, "scan_w.npy"), sw)
np.save(os.path.join(out, "scan_acc.npy"), acc)
np.save(os.path.join(out, "scan_static_partials.npy"), np.stack(rows[::-1], axis=1))
np.save(os.path.join(out, "scan_dynamic_partials.npy"), np.stack(rows, axis=0))
