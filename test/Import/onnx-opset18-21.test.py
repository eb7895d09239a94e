"""Writes models of opsets 18-21 (newer than the python onnx 1.12 that writes
them: the opset imports are set by hand and nothing runs onnx.checker) with
the changed ops gopt imports, their inputs and numpy's expected outputs, and
models with forms gopt refuses, into the directory given."""
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from later_opset_models import Writer, floats, ints, vi  # noqa: E402

out = sys.argv[1]
writer = Writer(out)
save, npy = writer.save, writer.npy

rng = np.random.default_rng(18)
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
p = (rng.random((2, 3, 4)) + 0.5).astype(np.float32)
npy("x", x)
npy("p", p)
npy("axes", np.array([1], np.int64))
xd = x.astype(np.float64)

# Opset 18 reductions: axes as a constant input, absent (all axes), empty
# with noop_with_empty_axes, and known only at run time.
reduce_nodes = [
    helper.make_node("ReduceMean", ["x", "a1"], ["mean"], name="mean"),
    helper.make_node("ReduceL2", ["x", "alast"], ["l2"], name="l2",
                     keepdims=0),
    helper.make_node("ReduceL1", ["x", "a02"], ["l1"], name="l1"),
    helper.make_node("ReduceLogSumExp", ["x"], ["lse"], name="lse"),
    helper.make_node("ReduceLogSum", ["p", "a1"], ["logsum"], name="logsum"),
    helper.make_node("ReduceMax", ["x", "none"], ["noop"], name="noop",
                     noop_with_empty_axes=1),
    helper.make_node("ReduceMin", ["x", "a2"], ["min"], name="min",
                     keepdims=0),
    helper.make_node("ReduceProd", ["p", "a1"], ["prod"], name="prod"),
    helper.make_node("ReduceSumSquare", ["x", "axes"], ["ssq"], name="ssq"),
]
save("reduce18", reduce_nodes,
     [vi("x", [2, 3, 4]), vi("p", [2, 3, 4]),
      vi("axes", [1], TensorProto.INT64)],
     [vi("mean", [2, 1, 4]), vi("l2", [2, 3]), vi("l1", [1, 3, 1]),
      vi("lse", [1, 1, 1]), vi("logsum", [2, 1, 4]), vi("noop", [2, 3, 4]),
      vi("min", [2, 3]), vi("prod", [2, 1, 4]), vi("ssq", [2, 1, 4])],
     18,
     [ints("a1", [1]), ints("alast", [-1]), ints("a02", [0, 2]),
      ints("a2", [2]), ints("none", [])])
npy("want_mean", xd.mean(axis=1, keepdims=True).astype(np.float32))
npy("want_l2", np.sqrt((xd * xd).sum(axis=-1)).astype(np.float32))
npy("want_l1", np.abs(xd).sum(axis=(0, 2), keepdims=True).astype(np.float32))
npy("want_lse", np.log(np.exp(xd).sum(keepdims=True)).astype(np.float32))
npy("want_logsum", np.log(p.astype(np.float64).sum(axis=1, keepdims=True))
    .astype(np.float32))
npy("want_noop", x)
npy("want_min", x.min(axis=2))
npy("want_prod", p.astype(np.float64).prod(axis=1, keepdims=True)
    .astype(np.float32))
npy("want_ssq", (xd * xd).sum(axis=1, keepdims=True).astype(np.float32))

# Pad-18 with axes (the last axis only) and Split-18 by num_outputs: 7
# splits into 3, 3 and 1.
save("pad_split18",
     [helper.make_node("Pad", ["x", "pads", "fill", "padaxes"], ["padded"],
                       name="pad"),
      helper.make_node("Split", ["padded"], ["s0", "s1", "s2"], name="split",
                       axis=2, num_outputs=3)],
     [vi("x", [2, 3, 4])],
     [vi("padded", [2, 3, 7]), vi("s0", [2, 3, 3]), vi("s1", [2, 3, 3]),
      vi("s2", [2, 3, 1])],
     18,
     [ints("pads", [1, 2]), floats("fill", 0.5), ints("padaxes", [-1])])
padded = np.pad(x, [(0, 0), (0, 0), (1, 2)], constant_values=0.5)
npy("want_padded", padded)
npy("want_s0", padded[:, :, 0:3])
npy("want_s1", padded[:, :, 3:6])
npy("want_s2", padded[:, :, 6:7])


def group_norm(v, groups, scale, bias, eps=1e-5):
    n, c = v.shape[:2]
    g = v.astype(np.float64).reshape(n, groups, -1)
    g = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(
        g.var(axis=2, keepdims=True) + eps)
    shape = (1, c) + (1,) * (v.ndim - 2)
    return (g.reshape(v.shape) * scale.reshape(shape)
            + bias.reshape(shape)).astype(np.float32)


# GroupNormalization-18: scale and bias per group (3 groups of 2 channels),
# a dynamic batch.
image = rng.standard_normal((2, 6, 3, 3)).astype(np.float32)
npy("image", image)
group_scale = np.array([0.5, 2.0, -1.0], np.float32)
group_bias = np.array([0.1, -0.2, 0.3], np.float32)
save("groupnorm18",
     [helper.make_node("GroupNormalization", ["image", "scale", "bias"],
                       ["gn"], name="gn", num_groups=3, epsilon=1e-5)],
     [vi("image", ["N", 6, 3, 3])], [vi("gn", ["N", 6, 3, 3])], 18,
     [floats("scale", group_scale), floats("bias", group_bias)])
npy("want_gn18", group_norm(image, 3, np.repeat(group_scale, 2),
                            np.repeat(group_bias, 2)))

# GroupNormalization-21 (IR version 10): scale and bias per channel.
channel_scale = np.linspace(-1.5, 1.5, 6).astype(np.float32)
channel_bias = np.linspace(0.5, -0.5, 6).astype(np.float32)
save("groupnorm21",
     [helper.make_node("GroupNormalization", ["image", "scale", "bias"],
                       ["gn"], name="gn", num_groups=2, epsilon=1e-3)],
     [vi("image", [2, 6, 3, 3])], [vi("gn", [2, 6, 3, 3])], 21,
     [floats("scale", channel_scale), floats("bias", channel_bias)],
     ir_version=10)
npy("want_gn21", group_norm(image, 2, channel_scale, channel_bias, 1e-3))

# Gelu-20, exact and with the tanh approximation.
save("gelu20",
     [helper.make_node("Gelu", ["x"], ["exact"], name="exact"),
      helper.make_node("Gelu", ["x"], ["approx"], name="approx",
                       approximate="tanh")],
     [vi("x", [2, 3, 4])], [vi("exact", [2, 3, 4]), vi("approx", [2, 3, 4])],
     20)
erf = np.vectorize(math.erf)
npy("want_exact", (0.5 * xd * (1 + erf(xd / math.sqrt(2)))).astype(np.float32))
npy("want_approx", (0.5 * xd * (1 + np.tanh(
    math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))).astype(np.float32))

# DFT-20: the axis an optional input (default -2), here given and absent.
signal = rng.standard_normal((2, 8, 1)).astype(np.float32)
npy("signal", signal)
save("dft20",
     [helper.make_node("DFT", ["signal", "", "axis"], ["given"], name="given"),
      helper.make_node("DFT", ["signal"], ["default"], name="default")],
     [vi("signal", [2, 8, 1])], [vi("given", [2, 8, 2]), vi("default", [2, 8, 2])],
     20, [numpy_helper.from_array(np.array(1, np.int64), "axis")])
spectrum = np.fft.fft(signal[..., 0].astype(np.float64), axis=1)
npy("want_dft", np.stack([spectrum.real, spectrum.imag], -1).astype(np.float32))

# Refused: an op newer than opset 17 that gopt does not import, and Pad-18
# axes known only at run time.
save("string_split20",
     [helper.make_node("StringSplit", ["text"], ["parts", "counts"], name="split")],
     [vi("text", [2], TensorProto.STRING)],
     [vi("parts", [2, None], TensorProto.STRING), vi("counts", [2], TensorProto.INT64)], 20)
save("pad18_dynamic_axes",
     [helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad")],
     [vi("x", [2, 3, 4]), vi("axes", [1], TensorProto.INT64)],
     [vi("y", [2, 3, 7])], 18, [ints("pads", [1, 2])])
