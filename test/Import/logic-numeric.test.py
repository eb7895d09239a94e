"""Writes the inputs and numpy's expected outputs of logic-numeric.test:

  tf_logic.pbtxt   TensorFlow's comparisons, logical ops, Select/SelectV2,
                   FloorMod/FloorDiv, IsNan/IsInf, BroadcastTo and Tile;
  onnx_logic.onnx  ONNX Expand and Tile with constant operands, Where, Mod;
  *.npy            inputs and expected outputs (numpy in float64 where it
                   matters).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]

x = np.array([[1.0, -2.0, np.nan], [np.inf, 0.5, -np.inf]], dtype=np.float32)
y = np.array([0.5, -2.0, 3.0], dtype=np.float32)
i = np.array([[7, -7, 7], [-7, 0, 5]], dtype=np.int32)
j = np.array([[3, 3, -3], [-3, 4, -2]], dtype=np.int32)
for name, value in (("x", x), ("y", y), ("i", i), ("j", j)):
    np.save(os.path.join(out, name + ".npy"), value)


def expect(name, value):
    np.save(os.path.join(out, "want_" + name + ".npy"), value)


with np.errstate(invalid="ignore"):
    eq, ne, lt = x == y, x != y, x < y
    le, gt, ge = x <= y, x > y, x >= y
    expect("eq", eq)
    expect("ne", ne)
    expect("lt", lt)
    expect("le", le)
    expect("gt", gt)
    expect("ge", ge)
    expect("land", np.logical_and(lt, ne))
    expect("lor", np.logical_or(eq, gt))
    expect("lnot", np.logical_not(le))
    expect("sel2", np.where(gt, x, y).astype(np.float32))
    expect("sel1", np.where(np.array([True, False])[:, None], x, -x))
    expect("fmod", np.mod(i, np.where(j == 0, 1, j)).astype(np.int32))
    expect("fdiv", np.floor_divide(i, j).astype(np.int32))
    expect("isnan", np.isnan(x))
    expect("isinf", np.isinf(x))
    expect("bcast", np.broadcast_to(y, (2, 3)).copy())
    expect("tile", np.tile(y, 2))

# TensorFlow writes Equal with incompatible_shape_error and keeps "T".
F, I, B = "DT_FLOAT", "DT_INT32", "DT_BOOL"


def node(name, op, inputs=(), t=None, extra=""):
    text = f'node {{ name: "{name}" op: "{op}"'
    for inp in inputs:
        text += f' input: "{inp}"'
    if t:
        text += f' attr {{ key: "T" value {{ type: {t} }} }}'
    return text + extra + " }\n"


def placeholder(name, dtype, dims):
    shape = " ".join(f"dim {{ size: {d} }}" for d in dims)
    return node(name, "Placeholder",
                extra=f' attr {{ key: "dtype" value {{ type: {dtype} }} }}'
                      f' attr {{ key: "shape" value {{ shape {{ {shape} }} }} }}')


def const(name, dtype, dims, field, values):
    shape = " ".join(f"dim {{ size: {d} }}" for d in dims)
    vals = " ".join(f"{field}: {v}" for v in values)
    return node(name, "Const",
                extra=f' attr {{ key: "dtype" value {{ type: {dtype} }} }}'
                      f' attr {{ key: "value" value {{ tensor {{ dtype: {dtype}'
                      f' tensor_shape {{ {shape} }} {vals} }} }} }}')


shape_error = ' attr { key: "incompatible_shape_error" value { b: true } }'
g = "".join([
    placeholder("x", F, [2, 3]), placeholder("y", F, [3]),
    placeholder("i", I, [2, 3]), placeholder("j", I, [2, 3]),
    node("eq", "Equal", ["x", "y"], F, shape_error),
    node("ne", "NotEqual", ["x", "y"], F, shape_error),
    node("lt", "Less", ["x", "y"], F), node("le", "LessEqual", ["x", "y"], F),
    node("gt", "Greater", ["x", "y"], F),
    node("ge", "GreaterEqual", ["x", "y"], F),
    node("land", "LogicalAnd", ["lt", "ne"]),
    node("lor", "LogicalOr", ["eq", "gt"]), node("lnot", "LogicalNot", ["le"]),
    node("sel2", "SelectV2", ["gt", "x", "y"], F),
    const("rows", B, [2], "bool_val", ["true", "false"]),
    node("negx", "Neg", ["x"], F),
    node("sel1", "Select", ["rows", "x", "negx"], F),
    # Equal and SelectV2 on integers: j with 1 for any 0 (none here).
    const("one", I, [], "int_val", [1]), const("zero", I, [], "int_val", [0]),
    node("jzero", "Equal", ["j", "zero"], I, shape_error),
    node("jsafe", "SelectV2", ["jzero", "one", "j"], I),
    node("fmod", "FloorMod", ["i", "jsafe"], I),
    node("fdiv", "FloorDiv", ["i", "j"], I),
    node("isnan", "IsNan", ["x"], F), node("isinf", "IsInf", ["x"], F),
    const("shape", I, [2], "int_val", [2, 3]),
    node("bcast", "BroadcastTo", ["y", "shape"], F),
    const("multiples", I, [1], "int_val", [2]),
    node("tile", "Tile", ["y", "multiples"], F),
])
with open(os.path.join(out, "tf_logic.pbtxt"), "w") as f:
    f.write(g)

# ONNX: Expand and Tile take constants; Where and Mod (fmod = 1, floats).
a = np.array([[1.5], [-2.5], [4.0]], dtype=np.float32)
d = np.array([1.0, -1.5, 2.0, 0.75], dtype=np.float32)
np.save(os.path.join(out, "a.npy"), a)
np.save(os.path.join(out, "d.npy"), d)
expanded = np.broadcast_to(a, (2, 3, 4))
tiled = np.tile(a, (2, 2))
expect("expanded", expanded.copy())
expect("tiled", tiled)
expect("picked", np.where(expanded > 0, expanded, np.float32(0)))
expect("rem", np.fmod(a, d).astype(np.float32))
nodes = [
    helper.make_node("Expand", ["a", "target"], ["expanded"]),
    helper.make_node("Tile", ["a", "reps"], ["tiled"]),
    helper.make_node("Greater", ["expanded", "zero"], ["positive"]),
    helper.make_node("Where", ["positive", "expanded", "zero"], ["picked"]),
    helper.make_node("Mod", ["a", "d"], ["rem"], fmod=1),
]
vi = helper.make_tensor_value_info
graph = helper.make_graph(
    nodes, "logic",
    [vi("a", TensorProto.FLOAT, [3, 1]), vi("d", TensorProto.FLOAT, [4])],
    [vi("expanded", TensorProto.FLOAT, [2, 3, 4]),
     vi("tiled", TensorProto.FLOAT, [6, 2]),
     vi("picked", TensorProto.FLOAT, [2, 3, 4]),
     vi("rem", TensorProto.FLOAT, [3, 4])],
    [numpy_helper.from_array(np.array([2, 1, 4], dtype=np.int64), "target"),
     numpy_helper.from_array(np.array([2, 2], dtype=np.int64), "reps"),
     numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
with open(os.path.join(out, "onnx_logic.onnx"), "wb") as f:
    f.write(model.SerializeToString())

# The same Expand with its shape as a graph input: not a constant.
graph = helper.make_graph(
    [helper.make_node("Expand", ["a", "target"], ["y"], name="grow")], "bad",
    [vi("a", TensorProto.FLOAT, [3, 1]), vi("target", TensorProto.INT64, [3])],
    [vi("y", TensorProto.FLOAT, [2, 3, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
with open(os.path.join(out, "onnx_expand_nonconst.onnx"), "wb") as f:
    f.write(model.SerializeToString())

# Floor mod and floor division of floats and integers, exported to ONNX as
# Div/Floor/Mul/Sub and Mod/Sub/Div (ONNX has neither op for floats).
p = np.array([7.5, -7.5, 7.5, -7.5, 0.0, 3.0], dtype=np.float32)
q = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.5], dtype=np.float32)
k = np.array([7, -7, 7, -7, 0, 9], dtype=np.int32)
m = np.array([2, 2, -2, -2, 3, 4], dtype=np.int32)
for name, value in (("p", p), ("q", q), ("k", k), ("m", m)):
    np.save(os.path.join(out, name + ".npy"), value)
expect("fmodf", np.mod(p, q))
expect("fdivf", np.floor_divide(p, q))
expect("fmodi", np.mod(k, m).astype(np.int32))
expect("fdivi", np.floor_divide(k, m).astype(np.int32))
with open(os.path.join(out, "floor.mlir"), "w") as f:
    f.write("""func.func @main(%p: tensor<6xf32> {gopt.name = "p"}, %q: tensor<6xf32> {gopt.name = "q"}, %k: tensor<6xi32> {gopt.name = "k"}, %m: tensor<6xi32> {gopt.name = "m"}) -> (tensor<6xf32> {gopt.name = "fmodf"}, tensor<6xf32> {gopt.name = "fdivf"}, tensor<6xi32> {gopt.name = "fmodi"}, tensor<6xi32> {gopt.name = "fdivi"}) {
  %0 = gopt.mod %p, %q : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %1 = gopt.floor_div %p, %q : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %2 = gopt.mod %k, %m : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %3 = gopt.floor_div %k, %m : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<6xf32>, tensor<6xi32>, tensor<6xi32>
}
""")

# TensorFlow errors: BroadcastTo's shape computed at run time; Select's
# condition neither a scalar, x's shape nor a vector of its rows.
with open(os.path.join(out, "tf_nonconst.pbtxt"), "w") as f:
    f.write(placeholder("y", F, [3]) + placeholder("s", I, [2])
            + node("grow", "BroadcastTo", ["y", "s"], F))
with open(os.path.join(out, "tf_select_bad.pbtxt"), "w") as f:
    f.write(placeholder("x", F, [2, 3]) + placeholder("c", B, [2, 1])
            + node("pick", "Select", ["c", "x", "x"], F))
with open(os.path.join(out, "tf_equal_attr.pbtxt"), "w") as f:
    f.write(placeholder("y", F, [3])
            + node("same", "Equal", ["y", "y"], F,
                   ' attr { key: "fuzzy" value { b: true } }'))
