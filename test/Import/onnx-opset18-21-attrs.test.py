"""Writes models of opsets 18-21 in which ops gopt imported before use the
attributes or inputs their later versions added (the python onnx 1.12 that
writes them knows opsets up to 17: the opset imports are set by hand and
nothing runs onnx.checker), their inputs and the expected outputs (numpy
following ONNX's reference implementation, and PyTorch where it computes
the same), and models with bad values, into the directory given."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from later_opset_models import Writer, floats, ints, vi  # noqa: E402

out = sys.argv[1]
writer = Writer(out)
save, npy = writer.save, writer.npy

rng = np.random.default_rng(1821)

# --------------------------------------------------------------------------
# Resize-18/19
# --------------------------------------------------------------------------


def neighbours(x, n, length):
    """ONNX's reference: the n indexes nearest x in the input padded by
    ceil(n / 2) edge copies (the smaller first on ties), as input indexes."""
    pad = (n + 1) // 2
    xs = x + pad
    order = sorted(range(length + 2 * pad), key=lambda i: (abs(xs - i), i))
    return np.clip(np.array(sorted(order[:n])) - pad, 0, length - 1)


def coeffs(mode, ratio, scale, a, antialias):
    if mode == "linear" and not antialias:
        return np.array([1 - ratio, ratio])
    if mode == "linear":
        s = min(scale, 1.0)
        start = int(np.floor(-1 / s) + 1)
        args = (np.arange(start, 2 - start) - ratio) * s
        c = np.clip(1 - np.abs(args), 0, 1)
        return c / c.sum()

    def keys(d):
        d = abs(d)
        if d <= 1:
            return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
        if d < 2:
            return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
        return 0.0
    s = min(scale, 1.0) if antialias else 1.0
    start = int(np.floor(-2 / s) + 1)
    c = np.array([keys(s * (i - ratio)) for i in range(start, 2 - start)])
    return c / c.sum()


def resize_matrix(length, out_len, scale, mode, ctm, a=-0.75,
                  antialias=False, exclude=False):
    """Rows of output weights over the input along one axis."""
    w = np.zeros((out_len, length))
    out_float = scale * length
    for o in range(out_len):
        if ctm == "half_pixel":
            xo = (o + 0.5) / scale - 0.5
        elif ctm == "half_pixel_symmetric":
            offset = length / 2 * (1 - out_len / out_float)
            xo = offset + (o + 0.5) / scale - 0.5
        elif ctm == "asymmetric":
            xo = o / scale
        else:
            raise ValueError(ctm)
        ratio = 1.0 if float(xo).is_integer() else xo - np.floor(xo)
        c = coeffs(mode, ratio, scale, a, antialias)
        pad = (len(c) + 1) // 2
        xs = xo + pad
        order = sorted(range(length + 2 * pad), key=lambda i: (abs(xs - i), i))
        raw = np.array(sorted(order[:len(c)])) - pad
        if exclude:
            c = np.where((raw < 0) | (raw >= length), 0, c)
            c = c / c.sum()
        for k, i in enumerate(np.clip(raw, 0, length - 1)):
            w[o, i] += c[k]
    return w


def resize_ref(x, out_hw, scales_hw, mode, ctm, **kw):
    wh = resize_matrix(x.shape[2], out_hw[0], scales_hw[0], mode, ctm, **kw)
    ww = resize_matrix(x.shape[3], out_hw[1], scales_hw[1], mode, ctm, **kw)
    y = np.einsum("oh,nchw,pw->ncop", wh, x.astype(np.float64), ww)
    return y.astype(np.float32)


image = rng.standard_normal((2, 3, 17, 23)).astype(np.float32)
npy("image", image)
H, W = image.shape[2:]


def resize_node(name, inputs, **attrs):
    return helper.make_node("Resize", inputs, [name], name=name, **attrs)


# Antialiased downscaling: linear and cubic, by scales and by sizes, with
# and without exclude_outside; one upscale (antialias changes nothing).
cases = []


def case(name, out_hw, scales_hw, mode, inputs, inits, ctm="half_pixel",
         **attrs):
    kw = {k: v for k, v in attrs.items()
          if k in ("antialias", "exclude_outside", "cubic_coeff_a")}
    want = resize_ref(image, out_hw, scales_hw, mode, ctm,
                      a=kw.get("cubic_coeff_a", -0.75),
                      antialias=bool(kw.get("antialias", 0)),
                      exclude=bool(kw.get("exclude_outside", 0)))
    npy("want_" + name, want)
    cases.append((resize_node(name, inputs, mode=mode,
                              coordinate_transformation_mode=ctm, **attrs),
                  vi(name, [2, 3, *out_hw]), inits))
    return want


s = [0.5, 0.4]
case("lin_scales", [int(H * s[0]), int(W * s[1])], s, "linear",
     ["image", "", "s_lin"], [floats("s_lin", [1, 1, *s])], antialias=1)
lin_sizes = case("lin_sizes", [6, 5], [6 / H, 5 / W], "linear",
                 ["image", "", "", "z_lin"], [ints("z_lin", [2, 3, 6, 5])],
                 antialias=1, exclude_outside=1)
case("cub_scales", [int(H * 0.3), int(W * 0.6)], [0.3, 0.6], "cubic",
     ["image", "", "s_cub"], [floats("s_cub", [1, 1, 0.3, 0.6])], antialias=1)
cub_sizes = case("cub_sizes", [7, 9], [7 / H, 9 / W], "cubic",
                 ["image", "", "", "z_cub"], [ints("z_cub", [2, 3, 7, 9])],
                 antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)
case("lin_up", [int(H * 2.0), int(W * 1.3)], [2.0, 1.3], "linear",
     ["image", "", "s_up"], [floats("s_up", [1, 1, 2.0, 1.3])], antialias=1)

# 'axes' (reversed) with keep_aspect_ratio_policy: one scale for H and W,
# the sizes rounded from it.
for policy, pick in (("not_larger", min), ("not_smaller", max)):
    name = "keep_" + policy
    sc = pick(8 / H, 9 / W)
    out_hw = [int(sc * H + 0.5), int(sc * W + 0.5)]
    npy("want_" + name, resize_ref(image, out_hw, [sc, sc], "linear",
                                   "half_pixel"))
    cases.append((resize_node(name, ["image", "", "", "z_keep"], mode="linear",
                              axes=[3, 2], keep_aspect_ratio_policy=policy),
                  vi(name, [2, 3, *out_hw]), []))
cases[-1][2].append(ints("z_keep", [9, 8]))
save("resize18", [c[0] for c in cases], [vi("image", [2, 3, H, W])],
     [c[1] for c in cases], 18, [i for c in cases for i in c[2]])

# Scales known only at run time: gopt.dynamic_resize keeps antialias.
npy("dyn_scales", np.array([1, 1, 0.5, 0.4], np.float32))
save("resize18_dynamic",
     [resize_node("dyn", ["image", "", "dyn_scales"], mode="linear",
                  antialias=1)],
     [vi("image", [2, 3, H, W]), vi("dyn_scales", [4])],
     [vi("dyn", [2, 3, None, None])], 18)

# PyTorch's antialias (as torchvision's) is ONNX's with exclude_outside:
# bilinear, and bicubic with Keys' a = -0.5.
import torch  # noqa: E402

t = torch.from_numpy(image)
torch_lin = torch.nn.functional.interpolate(
    t, size=(6, 5), mode="bilinear", align_corners=False, antialias=True)
torch_cub = torch.nn.functional.interpolate(
    t, size=(7, 9), mode="bicubic", align_corners=False, antialias=True)
npy("torch_lin_sizes", torch_lin.numpy())
npy("torch_cub_sizes", torch_cub.numpy())
assert np.allclose(torch_lin.numpy(), lin_sizes, atol=1e-5)
assert np.allclose(torch_cub.numpy(), cub_sizes, atol=1e-5)

# Resize-19's half_pixel_symmetric: 17 * 0.7 = 11.9 rounds down to 11.
sym_out = [int(H * 0.7), int(W * 0.5)]
npy("want_sym", resize_ref(image, sym_out, [0.7, 0.5], "linear",
                           "half_pixel_symmetric"))
save("resize19",
     [resize_node("sym", ["image", "", "s_sym"], mode="linear",
                  coordinate_transformation_mode="half_pixel_symmetric")],
     [vi("image", [2, 3, H, W])], [vi("sym", [2, 3, *sym_out])], 19,
     [floats("s_sym", [1, 1, 0.7, 0.5])])

# Bad values: an unknown policy, axes that repeat, half_pixel_symmetric
# before opset 19.
save("resize18_bad_policy",
     [resize_node("bad", ["image", "", "", "z"], mode="linear",
                  keep_aspect_ratio_policy="fit")],
     [vi("image", [2, 3, H, W])], [vi("bad", [2, 3, 8, 8])], 18,
     [ints("z", [2, 3, 8, 8])])
save("resize18_bad_axes",
     [resize_node("bad", ["image", "", "", "z"], mode="linear", axes=[2, -2])],
     [vi("image", [2, 3, H, W])], [vi("bad", [2, 3, 8, 8])], 18,
     [ints("z", [8, 8])])
save("resize18_symmetric",
     [resize_node("bad", ["image", "", "s"], mode="linear",
                  coordinate_transformation_mode="half_pixel_symmetric")],
     [vi("image", [2, 3, H, W])], [vi("bad", [2, 3, 8, 11])], 18,
     [floats("s", [1, 1, 0.5, 0.5])])

# --------------------------------------------------------------------------
# Pad-19's wrap (pads longer than the dim wrap again), and refused at 18.
# --------------------------------------------------------------------------
grid = rng.standard_normal((2, 3, 4)).astype(np.float32)
npy("grid", grid)


def torus(x, pads):
    """x padded as if it were a torus (ONNX's words for wrap): index i of a
    padded dim reads i - before mod n."""
    index = [np.arange(-b, n + a) % n for n, (b, a) in zip(x.shape, pads)]
    return x[np.ix_(*index)]


# Up to the dim's size numpy's wrap agrees; beyond, numpy (ONNX's reference)
# repeats a shifted period, the torus does not.
assert np.array_equal(torus(grid, [(0, 0), (1, 2), (4, 3)]),
                      np.pad(grid, [(0, 0), (1, 2), (4, 3)], mode="wrap"))
npy("want_wrap", torus(grid, [(0, 0), (1, 2), (5, 3)]))
npy("want_wrap_axes", np.pad(grid, [(0, 0), (0, 0), (2, 1)], mode="wrap"))
save("pad19",
     [helper.make_node("Pad", ["grid", "pads"], ["wrap"], name="wrap",
                       mode="wrap"),
      helper.make_node("Pad", ["grid", "pads_axes", "", "axes"],
                       ["wrap_axes"], name="wrap_axes", mode="wrap")],
     [vi("grid", [2, 3, 4])], [vi("wrap", [2, 6, 12]), vi("wrap_axes", [2, 3, 7])],
     19, [ints("pads", [0, 1, 5, 0, 2, 3]), ints("pads_axes", [2, 1]),
          ints("axes", [-1])])
save("pad18_wrap",
     [helper.make_node("Pad", ["grid", "pads"], ["wrap"], name="wrap",
                       mode="wrap")],
     [vi("grid", [2, 3, 4])], [vi("wrap", [2, 6, 12])], 18,
     [ints("pads", [0, 1, 5, 0, 2, 3])])

# --------------------------------------------------------------------------
# ScatterElements-18 and ScatterND-18 with reduction max and min, indices
# that repeat; refused before opset 18.
# --------------------------------------------------------------------------
data = rng.standard_normal((4, 5)).astype(np.float32)
upd = rng.standard_normal((4, 3)).astype(np.float32) * 2
idx = np.array([[0, 2, 0], [4, 4, 1], [3, 3, 3], [1, 0, 1]], np.int64)
npy("data", data)
npy("upd", upd)
for red, fn in (("max", np.maximum), ("min", np.minimum)):
    want = data.copy()
    for i in range(4):
        for j in range(3):
            want[i, idx[i, j]] = fn(want[i, idx[i, j]], upd[i, j])
    npy("want_se_" + red, want)
nd_idx = np.array([[2], [0], [2], [3]], np.int64)
nd_upd = rng.standard_normal((4, 5)).astype(np.float32) * 2
npy("nd_upd", nd_upd)
for red, fn in (("max", np.maximum), ("min", np.minimum)):
    want = data.copy()
    for i in range(4):
        want[nd_idx[i, 0]] = fn(want[nd_idx[i, 0]], nd_upd[i])
    npy("want_nd_" + red, want)
save("scatter18",
     [helper.make_node("ScatterElements", ["data", "idx", "upd"],
                       ["se_max"], name="se_max", axis=1, reduction="max"),
      helper.make_node("ScatterElements", ["data", "idx", "upd"],
                       ["se_min"], name="se_min", axis=-1, reduction="min"),
      helper.make_node("ScatterND", ["data", "nd_idx", "nd_upd"],
                       ["nd_max"], name="nd_max", reduction="max"),
      helper.make_node("ScatterND", ["data", "nd_idx", "nd_upd"],
                       ["nd_min"], name="nd_min", reduction="min")],
     [vi("data", [4, 5]), vi("upd", [4, 3]), vi("nd_upd", [4, 5])],
     [vi(n, [4, 5]) for n in ("se_max", "se_min", "nd_max", "nd_min")], 18,
     [ints("idx", idx), ints("nd_idx", nd_idx)])
save("scatter16_max",
     [helper.make_node("ScatterElements", ["data", "idx", "upd"],
                       ["se_max"], name="se_max", axis=1, reduction="max")],
     [vi("data", [4, 5]), vi("upd", [4, 3])], [vi("se_max", [4, 5])], 16,
     [ints("idx", idx)])
save("scatter18_bad",
     [helper.make_node("ScatterElements", ["data", "idx", "upd"],
                       ["se"], name="se_bad", axis=1, reduction="maximum")],
     [vi("data", [4, 5]), vi("upd", [4, 3])], [vi("se", [4, 5])], 18,
     [ints("idx", idx)])

# --------------------------------------------------------------------------
# AveragePool-19's dilations (2-D, run as a 3-D pool).
# --------------------------------------------------------------------------
pool_in = rng.standard_normal((1, 2, 9, 10)).astype(np.float32)
npy("pool_in", pool_in)
# H: (9 - 5) / 1 + 1 = 5 windows of 3 rows 2 apart; W: (10 - 7) / 3 + 1 = 2.
want = np.zeros((1, 2, 5, 2), np.float32)
for oh in range(5):
    for ow in range(2):
        win = pool_in[:, :, oh * 1:oh * 1 + 5:2, ow * 3:ow * 3 + 7:3]
        want[:, :, oh, ow] = win.mean(axis=(2, 3))
npy("want_avg_dil", want)
save("avgpool19",
     [helper.make_node("AveragePool", ["pool_in"], ["avg_dil"],
                       name="avg_dil", kernel_shape=[3, 3],
                       dilations=[2, 3], strides=[1, 3])],
     [vi("pool_in", [1, 2, 9, 10])], [vi("avg_dil", [1, 2, 5, 2])], 19)

# --------------------------------------------------------------------------
# ReduceMax-20 and ReduceMin-20 of booleans (any and all); refused at 18.
# --------------------------------------------------------------------------
flags = rng.random((3, 4, 5)) < 0.7
npy("flags", flags)
npy("want_any", flags.any(axis=(1,), keepdims=True))
npy("want_all", flags.all(axis=(0, 2), keepdims=False))
save("reduce20_bool",
     [helper.make_node("ReduceMax", ["flags", "a1"], ["any"], name="any"),
      helper.make_node("ReduceMin", ["flags", "a02"], ["all"], name="all",
                       keepdims=0)],
     [vi("flags", [3, 4, 5], TensorProto.BOOL)],
     [vi("any", [3, 1, 5], TensorProto.BOOL), vi("all", [4], TensorProto.BOOL)],
     20, [ints("a1", [1]), ints("a02", [0, 2])])
save("reduce18_bool",
     [helper.make_node("ReduceMax", ["flags", "a1"], ["any"], name="any")],
     [vi("flags", [3, 4, 5], TensorProto.BOOL)],
     [vi("any", [3, 1, 5], TensorProto.BOOL)], 18, [ints("a1", [1])])

# --------------------------------------------------------------------------
# QuantizeLinear-21 / DequantizeLinear-21: blocked along axis 1 (block 4 of
# 6 columns: a remainder block of 2), output_dtype; bad shapes and types.
# --------------------------------------------------------------------------
qx = (rng.standard_normal((4, 6)) * 20).astype(np.float32)
q_scale = (rng.random((4, 2)) + 0.5).astype(np.float32)
q_zero = rng.integers(-10, 10, (4, 2)).astype(np.int8)
q_in = rng.integers(-128, 127, (4, 6)).astype(np.int8)
npy("qx", qx)
npy("q_in", q_in)
full_scale = np.repeat(q_scale, 4, axis=1)[:, :6]
full_zero = np.repeat(q_zero, 4, axis=1)[:, :6].astype(np.int32)
npy("want_q_blocked", np.clip(np.rint(qx / full_scale).astype(np.int32)
                              + full_zero, -128, 127).astype(np.int8))
npy("want_q_dtype", np.clip(np.rint(qx / full_scale), -128, 127)
    .astype(np.int8))
npy("want_dq_blocked", ((q_in.astype(np.int32) - full_zero) * full_scale)
    .astype(np.float32))
q_inits = [numpy_helper.from_array(q_scale, "q_scale"),
           numpy_helper.from_array(q_zero, "q_zero")]
save("quant21",
     [helper.make_node("QuantizeLinear", ["qx", "q_scale", "q_zero"],
                       ["q_blocked"], name="q_blocked", axis=1, block_size=4),
      helper.make_node("QuantizeLinear", ["qx", "q_scale"], ["q_dtype"],
                       name="q_dtype", axis=-1, block_size=4,
                       output_dtype=TensorProto.INT8),
      helper.make_node("DequantizeLinear", ["q_in", "q_scale", "q_zero"],
                       ["dq_blocked"], name="dq_blocked", axis=1,
                       block_size=4)],
     [vi("qx", [4, 6]), vi("q_in", [4, 6], TensorProto.INT8)],
     [vi("q_blocked", [4, 6], TensorProto.INT8),
      vi("q_dtype", [4, 6], TensorProto.INT8), vi("dq_blocked", [4, 6])],
     21, q_inits, ir_version=10)
save("quant21_bad_blocks",
     [helper.make_node("QuantizeLinear", ["qx", "q_scale"], ["q"],
                       name="q_bad", axis=1, block_size=2)],
     [vi("qx", [4, 6])], [vi("q", [4, 6], TensorProto.UINT8)], 21,
     [numpy_helper.from_array(q_scale, "q_scale")], ir_version=10)
save("quant21_int4",
     [helper.make_node("QuantizeLinear", ["qx", "q_scale"], ["q"],
                       name="q_int4", axis=1, block_size=4, output_dtype=22)],
     [vi("qx", [4, 6])], [vi("q", [4, 6], 22)], 21,
     [numpy_helper.from_array(q_scale, "q_scale")], ir_version=10)

# --------------------------------------------------------------------------
# LpPool (imported from opset 11; opset 18 adds ceil_mode and dilations).
# --------------------------------------------------------------------------


def lp_pool(x, kernel, strides, pads, dilations, p, ceil):
    """(sum of |x|^p over each window)^(1/p), zeros outside the input; with
    ceil_mode the last window may start in the end padding's place."""
    n = len(kernel)
    spatial = x.shape[2:]
    padded = np.pad(np.abs(x.astype(np.float64)) ** p,
                    [(0, 0), (0, 0)] + [(pads[d], pads[d + n] + 8)
                                        for d in range(n)])
    outs = []
    for d in range(n):
        span = (kernel[d] - 1) * dilations[d] + 1
        room = spatial[d] + pads[d] + pads[d + n] - span
        o = (-(-room // strides[d]) if ceil else room // strides[d]) + 1
        if ceil and (o - 1) * strides[d] >= spatial[d] + pads[d]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for idx in np.ndindex(*outs):
        sl = tuple(slice(idx[d] * strides[d],
                         idx[d] * strides[d] + (kernel[d] - 1) * dilations[d]
                         + 1, dilations[d]) for d in range(n))
        y[(Ellipsis,) + idx] = padded[(Ellipsis,) + sl].sum(
            axis=tuple(range(2, 2 + n)))
    return (y ** (1.0 / p)).astype(np.float32)


lp_in = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
lp_1d = rng.standard_normal((2, 3, 10)).astype(np.float32)
npy("lp_in", lp_in)
npy("lp_line", lp_1d)
lp_cases = [
    ("lp_default", lp_in, dict(kernel_shape=[3, 3]), [3, 3], [1, 1],
     [0, 0, 0, 0], [1, 1], 2, False),
    ("lp_pads_p1", lp_in, dict(kernel_shape=[2, 3], strides=[2, 1],
                               pads=[1, 0, 1, 2], p=1),
     [2, 3], [2, 1], [1, 0, 1, 2], [1, 1], 1, False),
    # 9 x 8 by 2 x 3 windows 2 apart: ceil_mode adds a last row and column
    # of windows that overhang the input.
    ("lp_ceil_p3", lp_in, dict(kernel_shape=[2, 3], strides=[2, 2],
                               ceil_mode=1, p=3),
     [2, 3], [2, 2], [0, 0, 0, 0], [1, 1], 3, True),
    ("lp_dilated", lp_in, dict(kernel_shape=[2, 2], dilations=[2, 3]),
     [2, 2], [1, 1], [0, 0, 0, 0], [2, 3], 2, False),
    ("lp_1d", lp_1d, dict(kernel_shape=[3], strides=[2]), [3], [2], [0, 0],
     [1], 2, False),
]
lp_nodes, lp_outs = [], []
for name, x, attrs, k, s, pd, dl, p, ceil in lp_cases:
    want = lp_pool(x, k, s, pd, dl, p, ceil)
    npy("want_" + name, want)
    src = "lp_line" if x is lp_1d else "lp_in"
    lp_nodes.append(helper.make_node("LpPool", [src], [name], name=name,
                                     **attrs))
    lp_outs.append(vi(name, list(want.shape)))
save("lppool18", lp_nodes,
     [vi("lp_in", [2, 3, 9, 8]), vi("lp_line", [2, 3, 10])],
     lp_outs, 18)
save("lppool11",
     [helper.make_node("LpPool", ["lp_in"], ["lp_default"], name="lp_default",
                       kernel_shape=[3, 3])],
     [vi("lp_in", [2, 3, 9, 8])], [vi("lp_default", [2, 3, 7, 6])], 11)
