"""Writes ONNX models that move float8 and 4-bit values through control flow
(If, Loop) and the data movement ops besides those of
onnx-float8-int4.test (Pad, Concat, Slice, Split, Gather, GatherElements,
Where, Expand, Tile), with numpy's expected outputs, into the directory
given. Every low-precision result is read through a Cast to float; the
oracle decodes with onnx-float8-int4.test.py's table (ONNX's definition of
each float8 type, from its parameters)."""
import importlib.util
import os
import sys

import numpy as np
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "Inputs"))
from later_opset_models import Writer, ints, vi  # noqa: E402

# The float8 decode table and the tensor helpers of the sibling test (its
# module body writes models too: into a scratch directory).
out = sys.argv[1]
scratch = os.path.join(out, "scratch")
os.makedirs(scratch, exist_ok=True)
argv, sys.argv = sys.argv, [sys.argv[0], scratch]
spec = importlib.util.spec_from_file_location(
    "f8", os.path.join(here, "onnx-float8-int4.test.py"))
f8 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(f8)
sys.argv = argv

writer = Writer(out)
save, npy = writer.save, writer.npy
rng = np.random.default_rng(1821)
tensor, pack4 = f8.tensor, f8.pack4
F8E4M3FN, F8E5M2FNUZ, UINT4, INT4 = f8.F8E4M3FN, f8.F8E5M2FNUZ, f8.UINT4, f8.INT4


def f32(x):
    return np.asarray(x, np.float32)


def codes8(n, dtype):
    """Random float8 codes without NaN."""
    table = f8.decode_table(dtype)
    ok = [c for c in range(256) if np.isfinite(table[c])]
    return rng.choice(ok, n)


def cast(src, dst):
    return helper.make_node("Cast", [src], [dst], to=TensorProto.FLOAT,
                            name=dst)


def graph(name, nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs,
                             initializer=list(inits))


# --------------------------------------------------------------------------
# If with float8 branch outputs (the then branch reads an outer float8
# value, the else branch slices another), Loop carrying an int4 value
# (rotated left by a Slice and Concat each iteration, three times) and a
# uint4 value (through Identity).
# --------------------------------------------------------------------------
a_codes = codes8(6, F8E4M3FN)
b_codes = codes8(8, F8E4M3FN)
v4 = rng.integers(-8, 8, 8)
u4 = rng.integers(0, 16, 6)
inits = [tensor("a8", F8E4M3FN, [2, 3], a_codes),
         tensor("b8", F8E4M3FN, [2, 4], b_codes),
         tensor("v4", INT4, [2, 4], pack4(v4)),
         tensor("u4", UINT4, [3, 2], pack4(u4)),
         ints("trips", 3), ints("s0", [0]), ints("s1", [1]), ints("s3", [3]),
         ints("big", [4]), ints("ax1", [1]),
         helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])]
then_g = graph("then", [helper.make_node("Identity", ["a8"], ["t_out"],
                                         name="t_id")],
               [], [vi("t_out", [2, 3], F8E4M3FN)])
else_g = graph("else", [helper.make_node("Slice", ["b8", "s1", "big", "ax1"],
                                         ["e_out"], name="e_slice")],
               [], [vi("e_out", [2, 3], F8E4M3FN)])
body = graph("body", [
    helper.make_node("Identity", ["c_in"], ["c_out"], name="b_cond"),
    helper.make_node("Slice", ["x_in", "s1", "big", "ax1"], ["x_tail"],
                     name="b_tail"),
    helper.make_node("Slice", ["x_in", "s0", "s1", "ax1"], ["x_head"],
                     name="b_head"),
    helper.make_node("Concat", ["x_tail", "x_head"], ["x_out"], axis=1,
                     name="b_cat"),
    helper.make_node("Identity", ["y_in"], ["y_out"], name="b_id")],
    [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL),
     vi("x_in", [2, 4], INT4), vi("y_in", [3, 2], UINT4)],
    [vi("c_out", [], TensorProto.BOOL), vi("x_out", [2, 4], INT4),
     vi("y_out", [3, 2], UINT4)])
nodes = [
    helper.make_node("Greater", ["sel", "zero"], ["cond"], name="cond"),
    helper.make_node("If", ["cond"], ["picked"], then_branch=then_g,
                     else_branch=else_g, name="if8"),
    cast("picked", "picked_f"),
    helper.make_node("Identity", ["cond"], ["go"], name="go"),
    helper.make_node("Loop", ["trips", "go", "v4", "u4"], ["v4_end", "u4_end"],
                     body=body, name="loop4"),
    cast("v4_end", "v4_f"), cast("u4_end", "u4_f")]
save("lowbits_flow", nodes, [vi("sel", [])],
     [vi("picked_f", [2, 3]), vi("v4_f", [2, 4]), vi("u4_f", [3, 2])], 21,
     inits, ir_version=10)
dec = f8.decode_table(F8E4M3FN)
npy("sel_pos", np.array(1.0, np.float32))
npy("sel_neg", np.array(-1.0, np.float32))
npy("want_then", f32(dec[a_codes].reshape(2, 3)))
npy("want_else", f32(dec[b_codes].reshape(2, 4)[:, 1:]))
npy("want_v4_loop", f32(np.roll(v4.reshape(2, 4), -3, axis=1)))
npy("want_v4_skip", f32(v4.reshape(2, 4)))  # cond false: no iteration
npy("want_u4", f32(u4.reshape(3, 2)))

# --------------------------------------------------------------------------
# Pad of float8 with a float8 constant value (constant, edge and reflect
# modes; pads known at compile time, and pads known only at run time, which
# reads the value as f32), and int4 Pad.
# --------------------------------------------------------------------------
p_codes = codes8(12, F8E5M2FNUZ)
fill = 0xBA  # a float8 e5m2fnuz code: -0.46875 (any finite one will do)
p4 = rng.integers(-8, 8, 6)
inits = [tensor("p8", F8E5M2FNUZ, [3, 4], p_codes),
         tensor("fill8", F8E5M2FNUZ, [], [fill]),
         tensor("p4", INT4, [2, 3], pack4(p4)),
         tensor("fill4", INT4, [], pack4([-5])),
         ints("pads", [1, 0, 0, 2])]
nodes = [
    helper.make_node("Pad", ["p8", "pads", "fill8"], ["pc"], mode="constant",
                     name="pad_c"),
    helper.make_node("Pad", ["p8", "pads"], ["pe"], mode="edge", name="pad_e"),
    helper.make_node("Pad", ["p8", "pads"], ["pr"], mode="reflect",
                     name="pad_r"),
    helper.make_node("Pad", ["p8", "rt_pads", "fill8"], ["pd"],
                     mode="constant", name="pad_d"),
    helper.make_node("Pad", ["p4", "pads", "fill4"], ["p4c"], mode="constant",
                     name="pad_4")]
nodes += [cast(n, n + "_f") for n in ("pc", "pe", "pr", "pd", "p4c")]
save("lowbits_pad", nodes, [vi("rt_pads", [4], TensorProto.INT64)],
     [vi("pc_f", [4, 6]), vi("pe_f", [4, 6]), vi("pr_f", [4, 6]),
      vi("pd_f", [4, 6]), vi("p4c_f", [3, 5])], 21, inits, ir_version=10)
dec = f8.decode_table(F8E5M2FNUZ)
x = dec[p_codes].reshape(3, 4)
width = ((1, 0), (0, 2))
npy("rt_pads", np.array([1, 0, 0, 2], np.int64))
npy("want_pc", f32(np.pad(x, width, constant_values=dec[fill])))
npy("want_pe", f32(np.pad(x, width, mode="edge")))
npy("want_pr", f32(np.pad(x, width, mode="reflect")))
npy("want_p4c", f32(np.pad(p4.reshape(2, 3), width, constant_values=-5)))

# --------------------------------------------------------------------------
# The other data movement ops on float8 and int4: Concat, Split, Gather,
# GatherElements, Where, Expand, Tile.
# --------------------------------------------------------------------------
g_codes = codes8(12, F8E4M3FN)
h_codes = codes8(12, F8E4M3FN)
g4 = rng.integers(-8, 8, 12)
mask = rng.integers(0, 2, 12).astype(bool)
idx = np.array([2, 0, 2], np.int64)
eidx = rng.integers(0, 4, 12).reshape(3, 4)
inits = [tensor("g8", F8E4M3FN, [3, 4], g_codes),
         tensor("h8", F8E4M3FN, [3, 4], h_codes),
         tensor("g4", INT4, [3, 4], pack4(g4)),
         helper.make_tensor("mask", TensorProto.BOOL, [3, 4],
                            mask.astype(int).tolist()),
         ints("idx", idx), ints("eidx", eidx), ints("split", [1, 3]),
         ints("shape_2_3_4", [2, 3, 4]), ints("reps", [2, 1])]
nodes = [
    helper.make_node("Concat", ["g8", "h8"], ["cat8"], axis=0, name="cat8"),
    helper.make_node("Split", ["g4", "split"], ["sp4a", "sp4b"], axis=1,
                     name="split4"),
    helper.make_node("Gather", ["g8", "idx"], ["ga8"], axis=0, name="ga8"),
    helper.make_node("GatherElements", ["g4", "eidx"], ["ge4"], axis=1,
                     name="ge4"),
    helper.make_node("Where", ["mask", "g8", "h8"], ["wh8"], name="wh8"),
    helper.make_node("Expand", ["g4", "shape_2_3_4"], ["ex4"], name="ex4"),
    helper.make_node("Tile", ["g8", "reps"], ["ti8"], name="ti8")]
moved = ["cat8", "sp4a", "sp4b", "ga8", "ge4", "wh8", "ex4", "ti8"]
nodes += [cast(n, n + "_f") for n in moved]
shapes = {"cat8": [6, 4], "sp4a": [3, 1], "sp4b": [3, 3], "ga8": [3, 4],
          "ge4": [3, 4], "wh8": [3, 4], "ex4": [2, 3, 4], "ti8": [6, 4]}
nodes.append(helper.make_node("Identity", ["tick"], ["tock"], name="tock"))
save("lowbits_more", nodes, [vi("tick", [1])],
     [vi(n + "_f", shapes[n]) for n in moved] + [vi("tock", [1])], 21, inits,
     ir_version=10)
dec = f8.decode_table(F8E4M3FN)
g, h, w4 = dec[g_codes].reshape(3, 4), dec[h_codes].reshape(3, 4), g4.reshape(3, 4)
npy("tick", np.ones(1, np.float32))
for name, value in (("cat8", np.concatenate([g, h])), ("sp4a", w4[:, :1]),
                    ("sp4b", w4[:, 1:]), ("ga8", g[idx]),
                    ("ge4", np.take_along_axis(w4, eidx, 1)),
                    ("wh8", np.where(mask.reshape(3, 4), g, h)),
                    ("ex4", np.broadcast_to(w4, (2, 3, 4))),
                    ("ti8", np.tile(g, (2, 1)))):
    npy("want_" + name, f32(value))

# --------------------------------------------------------------------------
# Still refused: float8 into arithmetic inside a branch.
# --------------------------------------------------------------------------
bad_then = graph("then", [helper.make_node("Relu", ["a8"], ["t_out"],
                                           name="relu8")],
                 [], [vi("t_out", [2, 3], F8E4M3FN)])
save("err_if_relu8",
     [helper.make_node("Greater", ["sel", "zero"], ["cond"], name="cond"),
      helper.make_node("If", ["cond"], ["picked"], then_branch=bad_then,
                       else_branch=else_g, name="if8")],
     [vi("sel", [])], [vi("picked", [2, 3], F8E4M3FN)], 21,
     [tensor("a8", F8E4M3FN, [2, 3], a_codes),
      tensor("b8", F8E4M3FN, [2, 4], b_codes), ints("s1", [1]),
      ints("big", [4]), ints("ax1", [1]),
      helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])],
     ir_version=10)
