"""Writes the models, inputs and numpy's expected outputs of
dtypes-numeric.test:

  onnx_dtypes.onnx  f64 arithmetic and math that f32 would round away,
                    uint16 subtraction (wraps), uint64 max beyond int64,
                    int16 Mod, a double initializer in double_data and a
                    uint32 one in uint64_data, Cast to uint8 and BitShift;
  tf_dtypes.pbtxt   DT_DOUBLE, DT_UINT8 (int_val) and DT_UINT64 (uint64_val)
                    constants and placeholders;
  *.npy             inputs and expected outputs.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

out = sys.argv[1]


def save(name, value):
    np.save(os.path.join(out, name + ".npy"), value)


x = np.array([1.0, 0.5, -3.0, 1e-10])
h = np.array([1, 40000, 65535], dtype=np.uint16)
big = np.array([18446744073709551615, 3, 9223372036854775808], dtype=np.uint64)
s = np.array([-7, 7, -32768], dtype=np.int16)
for name, value in (("x", x), ("h", h), ("big", big), ("s", s)):
    save(name, value)

tiny = 1e-12
save("want_sum", x + tiny)
save("want_e", np.exp(x))
save("want_wrap", h - np.uint16(2))
save("want_most", np.maximum(big, np.uint64(5)))
save("want_rem", np.fmod(s, np.int16(5)))
save("want_q", (x * 10 + 100).astype(np.uint8))
save("want_shifted", np.left_shift(h, np.uint16(1)))
save("want_scaled", x * np.uint32(4000000000).astype(np.float64))

T = TensorProto
g = helper.make_graph(
    [
        helper.make_node("Add", ["x", "tiny"], ["sum"]),
        helper.make_node("Exp", ["x"], ["e"]),
        helper.make_node("Sub", ["h", "two"], ["wrap"]),
        helper.make_node("Max", ["big", "five"], ["most"]),
        helper.make_node("Mod", ["s", "five16"], ["rem"], fmod=1),
        helper.make_node("Mul", ["x", "hundred"], ["x100"]),
        helper.make_node("Add", ["x100", "three_hundred"], ["x300"]),
        helper.make_node("Cast", ["x300"], ["q"], to=T.UINT8),
        helper.make_node("BitShift", ["h", "one"], ["shifted"], direction="LEFT"),
        helper.make_node("Cast", ["four_billion"], ["fb"], to=T.DOUBLE),
        helper.make_node("Mul", ["x", "fb"], ["scaled"]),
    ],
    "dtypes",
    [
        helper.make_tensor_value_info("x", T.DOUBLE, [4]),
        helper.make_tensor_value_info("h", T.UINT16, [3]),
        helper.make_tensor_value_info("big", T.UINT64, [3]),
        helper.make_tensor_value_info("s", T.INT16, [3]),
    ],
    [
        helper.make_tensor_value_info("sum", T.DOUBLE, [4]),
        helper.make_tensor_value_info("e", T.DOUBLE, [4]),
        helper.make_tensor_value_info("wrap", T.UINT16, [3]),
        helper.make_tensor_value_info("most", T.UINT64, [3]),
        helper.make_tensor_value_info("rem", T.INT16, [3]),
        helper.make_tensor_value_info("q", T.UINT8, [4]),
        helper.make_tensor_value_info("shifted", T.UINT16, [3]),
        helper.make_tensor_value_info("scaled", T.DOUBLE, [4]),
    ],
    [
        # Typed fields, not raw_data: double_data, int32_data, uint64_data.
        helper.make_tensor("tiny", T.DOUBLE, [], [tiny]),
        helper.make_tensor("two", T.UINT16, [], [2]),
        helper.make_tensor("five", T.UINT64, [], [5]),
        helper.make_tensor("five16", T.INT16, [], [5]),
        helper.make_tensor("hundred", T.DOUBLE, [], [10.0]),
        helper.make_tensor("three_hundred", T.DOUBLE, [], [100.0]),
        helper.make_tensor("one", T.UINT16, [], [1]),
        helper.make_tensor("four_billion", T.UINT32, [], [4000000000]),
    ],
)
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
with open(os.path.join(out, "onnx_dtypes.onnx"), "wb") as f:
    f.write(model.SerializeToString())

# TensorFlow: y = x + cast(u8) * k, with k a DT_DOUBLE constant; m = max(b, c)
# over DT_UINT64 with a value beyond int64.
u8 = np.array([250, 1, 0, 7], dtype=np.uint8)
save("u8", u8)
save("want_y", x + u8.astype(np.float64) * 0.25)
save("want_m", np.maximum(big, np.uint64(9223372036854775809)))


def placeholder(name, dtype, n):
    return (f'node {{ name: "{name}" op: "Placeholder" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "shape" value {{ shape {{ dim {{ size: {n} }} }} }} }} }}\n')


def const(name, dtype, field):
    return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: {dtype} tensor_shape {{ }} {field} }} }} }} }}\n')


def binary(name, op, a, b, t):
    return (f'node {{ name: "{name}" op: "{op}" input: "{a}" input: "{b}" '
            f'attr {{ key: "T" value {{ type: {t} }} }} }}\n')


pbtxt = (placeholder("x", "DT_DOUBLE", 4) + placeholder("u8", "DT_UINT8", 4) +
         placeholder("big", "DT_UINT64", 3) +
         const("k", "DT_DOUBLE", "double_val: 0.25") +
         const("c", "DT_UINT64", "uint64_val: 9223372036854775809") +
         'node { name: "f" op: "Cast" input: "u8" attr { key: "SrcT" value { type: DT_UINT8 } } '
         'attr { key: "DstT" value { type: DT_DOUBLE } } }\n' +
         binary("fk", "Mul", "f", "k", "DT_DOUBLE") +
         binary("y", "AddV2", "x", "fk", "DT_DOUBLE") +
         binary("m", "Maximum", "big", "c", "DT_UINT64"))
with open(os.path.join(out, "tf_dtypes.pbtxt"), "w") as f:
    f.write(pbtxt)
