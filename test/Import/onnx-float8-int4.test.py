"""Writes ONNX models (opsets 19-21) with float8 and 4-bit tensors, their
inputs and numpy's expected outputs, into the directory given.

The python onnx here (1.12) knows neither the data types (17-22) nor their
packing, and ml_dtypes is not installed: tensors are TensorProtos with
data_type set to the number and raw_data written by hand (4-bit values two
per byte, low nibble first), and the float8 oracle below implements ONNX's
definitions (Cast-19's rounding, saturation and special values) from the
types' parameters, by searching the 256 values of each type rather than by
manipulating bits as gopt does."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from later_opset_models import Writer, floats, ints, vi  # noqa: E402

out = sys.argv[1]
writer = Writer(out)
save, npy = writer.save, writer.npy
rng = np.random.default_rng(1921)

F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, UINT4, INT4 = 17, 18, 19, 20, 21, 22
FLOAT8 = [F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ]
NAMES = {F8E4M3FN: "e4m3fn", F8E4M3FNUZ: "e4m3fnuz", F8E5M2: "e5m2",
         F8E5M2FNUZ: "e5m2fnuz"}
# exponent bits, mantissa bits, bias, kind: "fn" (S.1111.111 is NaN, no
# inf), "fnuz" (0x80 is the only NaN, no -0, no inf), "ieee" (e5m2).
PARAMS = {F8E4M3FN: (4, 3, 7, "fn"), F8E4M3FNUZ: (4, 3, 8, "fnuz"),
          F8E5M2: (5, 2, 15, "ieee"), F8E5M2FNUZ: (5, 2, 16, "fnuz")}


def decode_table(dtype):
    """The value of each of the 256 codes."""
    ebits, mbits, bias, kind = PARAMS[dtype]
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> mbits) & ((1 << ebits) - 1)
    m = codes & ((1 << mbits) - 1)
    value = np.where(e == 0, m * 2.0 ** (1 - bias - mbits),
                     (1 + m / 2.0 ** mbits) * 2.0 ** (e - bias))
    value = sign * value
    if kind == "fn":
        value[(codes & 0x7F) == 0x7F] = np.nan
    elif kind == "fnuz":
        value[0x80] = np.nan
    else:
        emax = (1 << ebits) - 1
        value[(e == emax) & (m != 0)] = np.nan
        value[(e == emax) & (m == 0)] = sign[(e == emax) & (m == 0)] * np.inf
    return value


def encode(dtype, x, saturate):
    """ONNX Cast-19 of float64 values `x` to `dtype`, decoded back to float:
    the nearest finite value, ties to the even code; beyond the largest
    finite value (by more than half its ulp, or half exactly with an odd
    largest code) saturate, else inf (e5m2) or NaN."""
    table = decode_table(dtype)
    finite = np.array([c for c in range(256) if np.isfinite(table[c])])
    values = table[finite]
    biggest = np.nanmax(table[np.isfinite(table)])
    big_code = finite[np.argmax(values)]
    ulp = biggest - np.max(values[values < biggest])
    kind = PARAMS[dtype][3]
    result = []
    for v in np.asarray(x, np.float64).ravel():
        if np.isnan(v):
            result.append(np.nan)
            continue
        if saturate:
            v = min(max(v, -biggest), biggest)
        a = abs(v)
        # Past the largest value: the next (virtual) value has the other
        # mantissa parity.
        over = a > biggest + ulp / 2 or (a == biggest + ulp / 2 and big_code & 1)
        if over or np.isinf(a):
            result.append(np.copysign(np.inf, v) if kind == "ieee" else np.nan)
            continue
        d = np.abs(values - v)
        best = np.flatnonzero(d == d.min())
        if len(best) > 1:  # a tie: the even code
            best = [b for b in best if finite[b] % 2 == 0]
        r = values[best[0]]
        if r == 0 and kind == "fnuz":
            r = 0.0
        result.append(r)
    return np.array(result).reshape(np.shape(x))


def tensor(name, dtype, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = bytes(bytearray(int(v) & 0xFF for v in raw))
    return t


def pack4(values):
    """ONNX's 4-bit packing: element 2k in the low nibble of byte k."""
    nibbles = [int(v) & 0xF for v in np.asarray(values).ravel()]
    if len(nibbles) % 2:
        nibbles.append(0)
    return bytes(nibbles[i] | (nibbles[i + 1] << 4)
                 for i in range(0, len(nibbles), 2))


def f32(x):
    return np.asarray(x, np.float32)


# --------------------------------------------------------------------------
# Decoding: all 256 bytes of each float8 type, Cast to float.
# --------------------------------------------------------------------------
nodes, inits, outs = [], [], []
for dtype in FLOAT8:
    n = NAMES[dtype]
    inits.append(tensor("all_" + n, dtype, [256], range(256)))
    nodes.append(helper.make_node("Cast", ["all_" + n], ["dec_" + n],
                                  to=TensorProto.FLOAT, name="dec_" + n))
    outs.append(vi("dec_" + n, [256]))
    npy("want_dec_" + n, f32(decode_table(dtype)))
# An input the plan reads, so the tools have one to feed.
nodes.append(helper.make_node("Identity", ["tick"], ["tock"], name="tock"))
save("f8_decode", nodes, [vi("tick", [1])], outs + [vi("tock", [1])], 19,
     inits, ir_version=9)
npy("tick", f32([1.0]))

# --------------------------------------------------------------------------
# Encoding: Cast float -> float8 (saturate 1 and 0) -> float, at run time.
# --------------------------------------------------------------------------
tricky = [0.0, -0.0, 1.0, -1.0, 1.0625, 1.1875, -1.0625, 1.125, 1.375,
          0.3, -0.7, 3.14159, 100.0, 239.0, 240.0, 247.0, 248.0, 250.0,
          448.0, 460.0, 464.0, 465.0, 480.0, 500.0, -464.0, -1000.0,
          57344.0, 61439.0, 61440.0, 70000.0, -61440.0, 1e9, -1e9,
          np.inf, -np.inf, np.nan,
          2.0 ** -9, 2.0 ** -10, 1.5 * 2.0 ** -10, 3 * 2.0 ** -10,
          15 * 2.0 ** -10, 13 * 2.0 ** -10, -2.0 ** -11, 2.0 ** -16,
          2.0 ** -17, 3 * 2.0 ** -18, 2.0 ** -18, 1e-30, -1e-30, 2.0 ** -7,
          7.5 * 2.0 ** -9, 0.0009765625, 65504.0]
xs = f32(np.concatenate([tricky, rng.normal(0, 30, 64), rng.normal(0, 3e4, 32),
                         rng.normal(0, 1e-3, 32)]))
nodes, outs = [], []
for dtype in FLOAT8:
    n = NAMES[dtype]
    for sat in (1, 0):
        name = "enc_%s_s%d" % (n, sat)
        nodes += [helper.make_node("Cast", ["xs"], [name + "_f8"], to=dtype,
                                   saturate=sat, name=name + "_f8"),
                  helper.make_node("Cast", [name + "_f8"], [name],
                                   to=TensorProto.FLOAT, name=name)]
        outs.append(vi(name, [len(xs)]))
        npy("want_" + name, f32(encode(dtype, xs.astype(np.float64), sat)))
save("f8_encode", nodes, [vi("xs", [len(xs)])], outs, 19, ir_version=9)
npy("xs", xs)

# --------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear with float8: per axis, saturate.
# --------------------------------------------------------------------------
qx = f32(rng.normal(0, 200, (3, 8)))
qx[0, :3] = [1e6, -1e6, 5000.0]
qscale = f32([0.5, 2.0, 0.25])
nodes, inits, outs = [], [floats("qscale", qscale)], []
for dtype in (F8E4M3FN, F8E5M2, F8E4M3FNUZ):
    n = NAMES[dtype]
    inits.append(tensor("qzero_" + n, dtype, [3], [0, 0, 0]))
    for sat in (1, 0):
        q = "q_%s_s%d" % (n, sat)
        nodes += [
            helper.make_node("QuantizeLinear", ["qx", "qscale", "qzero_" + n],
                             [q], axis=0, saturate=sat, name=q),
            helper.make_node("Cast", [q], [q + "_f"], to=TensorProto.FLOAT,
                             name=q + "_f"),
            helper.make_node("DequantizeLinear", [q, "qscale", "qzero_" + n],
                             [q + "_dq"], axis=0, name=q + "_dq")]
        outs += [vi(q + "_f", [3, 8]), vi(q + "_dq", [3, 8])]
        want = encode(dtype, qx.astype(np.float64) / qscale[:, None], sat)
        npy("want_" + q + "_f", f32(want))
        npy("want_" + q + "_dq", f32(want * qscale[:, None]))
save("f8_qdq", nodes, [vi("qx", [3, 8])], outs, 19, inits, ir_version=9)
npy("qx", qx)

# --------------------------------------------------------------------------
# int4 weight-only quantization: an int4 weight with blocked scales and zero
# points (block_size 16 along K) -> DequantizeLinear -> MatMul, as
# weight-only quantized LLM exports write it; uint4 per axis with an odd
# element count (a half-filled last byte); QuantizeLinear to int4 (blocked,
# output_dtype) and uint4 (zero point).
# --------------------------------------------------------------------------
K, N, B = 64, 12, 16
wq = rng.integers(-8, 8, (K, N))
wscale = f32(rng.uniform(0.01, 0.1, (K // B, N)))
wzero = rng.integers(-3, 4, (K // B, N))
ux = rng.integers(0, 16, (3, 5))
uscale = f32([0.5, 0.25, 1.0, 2.0, 0.125])
uzero = np.array([8, 0, 15, 3, 7])
a = f32(rng.normal(0, 1, (2, K)))
w = (wq - np.repeat(wzero, B, axis=0)) * np.repeat(wscale, B, axis=0)
inits = [tensor("wq", INT4, [K, N], pack4(wq)), numpy_helper.from_array(wscale, "wscale"),
         tensor("wzero", INT4, [K // B, N], pack4(wzero)),
         tensor("ux", UINT4, [3, 5], pack4(ux)), numpy_helper.from_array(uscale, "uscale"),
         tensor("uzero", UINT4, [5], pack4(uzero)),
         numpy_helper.from_array(f32(np.full((2, 4), 0.05)), "qscale4"),
         tensor("qzero_u4", UINT4, [1], pack4([8]))]
inits.append(numpy_helper.from_array(f32(0.1), "qscale_u4"))
nodes = [
    helper.make_node("DequantizeLinear", ["wq", "wscale", "wzero"], ["w"],
                     axis=0, block_size=B, name="w"),
    helper.make_node("MatMul", ["a", "w"], ["y"], name="y"),
    helper.make_node("DequantizeLinear", ["ux", "uscale", "uzero"], ["u"],
                     axis=1, name="u"),
    helper.make_node("QuantizeLinear", ["a8", "qscale4"], ["q4"], axis=1,
                     block_size=4, output_dtype=INT4, name="q4"),
    helper.make_node("Cast", ["q4"], ["q4_f"], to=TensorProto.FLOAT,
                     name="q4_f"),
    helper.make_node("Reshape", ["qzero_u4", "scalar_shape"], ["qzero_u4_s"],
                     name="qzero_u4_s"),
    helper.make_node("QuantizeLinear", ["a8", "qscale_u4", "qzero_u4_s"],
                     ["qu4"], name="qu4"),
    helper.make_node("Cast", ["qu4"], ["qu4_f"], to=TensorProto.FLOAT,
                     name="qu4_f")]
inits.append(ints("scalar_shape", np.zeros(0, np.int64)))
a8 = f32(rng.normal(0, 0.4, (2, 16)))
a8[0, :4] = [0.125, 0.175, -0.125, 10.0]  # ties at 2.5 and 3.5; clamp
save("int4_qdq", nodes, [vi("a", [2, K]), vi("a8", [2, 16])],
     [vi("y", [2, N]), vi("u", [3, 5]), vi("q4_f", [2, 16]),
      vi("qu4_f", [2, 16])], 21, inits, ir_version=10)
npy("a", a)
npy("a8", a8)
npy("want_y", f32(a.astype(np.float64) @ w))
npy("want_u", f32((ux - uzero) * uscale))
q4 = np.clip(np.rint(a8 / np.float32(0.05)), -8, 7)  # f32 division, as ONNX
npy("want_q4_f", f32(q4))
npy("want_qu4_f", f32(np.clip(np.rint(a8 / np.float32(0.1)) + 8, 0, 15)))

# --------------------------------------------------------------------------
# Data movement of float8 and int4 values: Reshape, Transpose, Flatten,
# Squeeze, Unsqueeze, Identity, Shape, Size, then a Cast to read them.
# --------------------------------------------------------------------------
codes = rng.integers(0, 256, 24)
codes[codes == 0x7F] = 1  # no NaN in e4m3fn here
codes[codes == 0xFF] = 2
i4 = rng.integers(-8, 8, 24)
nodes = []
inits = [tensor("m8", F8E4M3FN, [2, 3, 4], codes),
         tensor("m4", INT4, [2, 3, 4], pack4(i4)),
         ints("shape_4_6", [4, 6]), ints("axes0", [0])]
for src in ("m8", "m4"):
    nodes += [
        helper.make_node("Transpose", [src], [src + "_t"], perm=[2, 0, 1],
                         name=src + "_t"),
        helper.make_node("Reshape", [src + "_t", "shape_4_6"], [src + "_r"],
                         name=src + "_r"),
        helper.make_node("Unsqueeze", [src + "_r", "axes0"], [src + "_u"],
                         name=src + "_u"),
        helper.make_node("Flatten", [src + "_u"], [src + "_fl"], axis=0,
                         name=src + "_fl"),
        helper.make_node("Squeeze", [src + "_fl", "axes0"], [src + "_sq"],
                         name=src + "_sq"),
        helper.make_node("Identity", [src + "_sq"], [src + "_id"],
                         name=src + "_id"),
        helper.make_node("Cast", [src + "_id"], [src + "_out"],
                         to=TensorProto.FLOAT, name=src + "_out"),
        helper.make_node("Shape", [src + "_t"], [src + "_shape"],
                         name=src + "_shape"),
        helper.make_node("Size", [src], [src + "_size"], name=src + "_size")]
inits.append(ints("shape_2_3", [2, 3]))
for name, dtype, raw in (("c4", INT4, pack4([-3])), ("c8", F8E5M2, [0xC2])):
    nodes += [helper.make_node("ConstantOfShape", ["shape_2_3"], [name],
                               value=tensor("v", dtype, [1], raw), name=name),
              helper.make_node("Cast", [name], [name + "_out"],
                               to=TensorProto.FLOAT, name=name + "_out")]
nodes.append(helper.make_node("Identity", ["tick"], ["tock"], name="tock"))
save("lowbits_moves", nodes, [vi("tick", [1])],
     [vi("c4_out", [2, 3]), vi("c8_out", [2, 3])] +
     [vi("m8_out", [24]), vi("m4_out", [24]),
      vi("m8_shape", [3], TensorProto.INT64),
      vi("m4_shape", [3], TensorProto.INT64),
      vi("m8_size", [], TensorProto.INT64), vi("m4_size", [], TensorProto.INT64),
      vi("tock", [1])], 21, inits, ir_version=10)
dec = decode_table(F8E4M3FN)
npy("want_m8_out", f32(dec[codes].reshape(2, 3, 4).transpose(2, 0, 1).ravel()))
npy("want_m4_out", f32(i4.reshape(2, 3, 4).transpose(2, 0, 1).ravel()))
npy("want_shape", np.array([4, 2, 3], np.int64))
npy("want_size", np.array(24, np.int64))
npy("want_c", f32(np.full((2, 3), -3.0)))

# Graph inputs and outputs of float8 type (the runtime's npy files hold
# float8 as f32 values): a cast in, identity out.
save("f8_io", [helper.make_node("Cast", ["xs"], ["x8"], to=F8E5M2, name="x8"),
               helper.make_node("Transpose", ["x8"], ["x8t"], perm=[0],
                                name="x8t")],
     [vi("xs", [len(xs)])], [vi("x8t", [len(xs)], F8E5M2)], 19, ir_version=9)
npy("want_x8t", f32(encode(F8E5M2, xs.astype(np.float64), 1)))

# --------------------------------------------------------------------------
# Errors: float8 into an op that does not take it, int4 into Add, a packed
# tensor with the wrong byte count.
# --------------------------------------------------------------------------
save("err_conv_f8",
     [helper.make_node("Cast", ["img"], ["img8"], to=F8E4M3FN, name="img8"),
      helper.make_node("Conv", ["img8", "k8"], ["c"], name="conv8")],
     [vi("img", [1, 1, 4, 4])], [vi("c", [1, 1, 2, 2], F8E4M3FN)], 19,
     [tensor("k8", F8E4M3FN, [1, 1, 3, 3], [0x38] * 9)], ir_version=9)
save("err_add_i4",
     [helper.make_node("Add", ["w4", "w4"], ["s"], name="add4")],
     [], [vi("s", [3], INT4)], 21, [tensor("w4", INT4, [3], pack4([1, 2, 3]))],
     ir_version=10)
save("err_bytes_i4",
     [helper.make_node("Cast", ["w4"], ["s"], to=TensorProto.FLOAT, name="c")],
     [], [vi("s", [5])], 21, [tensor("w4", INT4, [5], [1, 2])],
     ir_version=10)
