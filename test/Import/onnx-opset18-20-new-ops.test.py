"""Writes models with the ops new in ONNX opsets 18-20 that gopt imports
(newer than the python onnx 1.12 that writes them: the opset imports are set
by hand and nothing runs onnx.checker), their inputs and expected outputs
from an independent oracle (numpy, or torch where it has the op), and
models gopt must refuse, into the directory given."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from later_opset_models import Writer, ints, vi  # noqa: E402

out = sys.argv[1]
writer = Writer(out)
save, npy = writer.save, writer.npy

rng = np.random.default_rng(1820)

# BitwiseAnd, BitwiseOr, BitwiseXor (broadcast) and BitwiseNot, opset 18, on
# signed (negative values: two's complement) and unsigned integers.
ia = rng.integers(-1000, 1000, (2, 3)).astype(np.int32)
ib = rng.integers(-1000, 1000, (3,)).astype(np.int32)
ua = rng.integers(0, 256, (2, 4)).astype(np.uint8)
ub = rng.integers(0, 256, (2, 1)).astype(np.uint8)
lw = rng.integers(-2**62, 2**62, (5,)).astype(np.int64)
for name, value in [("ia", ia), ("ib", ib), ("ua", ua), ("ub", ub),
                    ("lw", lw)]:
    npy(name, value)
I32, U8, I64 = TensorProto.INT32, TensorProto.UINT8, TensorProto.INT64
save("bitwise18", [
    helper.make_node("BitwiseAnd", ["ia", "ib"], ["and"], name="and"),
    helper.make_node("BitwiseOr", ["ua", "ub"], ["or"], name="or"),
    helper.make_node("BitwiseXor", ["ia", "ib"], ["xor"], name="xor"),
    helper.make_node("BitwiseNot", ["ia"], ["not"], name="not"),
    helper.make_node("BitwiseNot", ["ua"], ["unot"], name="unot"),
    helper.make_node("BitwiseXor", ["lw", "lw"], ["zero"], name="zero"),
    helper.make_node("BitwiseNot", ["lw"], ["lnot"], name="lnot"),
], [vi("ia", [2, 3], I32), vi("ib", [3], I32), vi("ua", [2, 4], U8),
    vi("ub", [2, 1], U8), vi("lw", [5], I64)],
    [vi("and", [2, 3], I32), vi("or", [2, 4], U8), vi("xor", [2, 3], I32),
     vi("not", [2, 3], I32), vi("unot", [2, 4], U8), vi("zero", [5], I64),
     vi("lnot", [5], I64)], 18)
npy("want_and", np.bitwise_and(ia, ib))
npy("want_or", np.bitwise_or(ua, ub))
npy("want_xor", np.bitwise_xor(ia, ib))
npy("want_not", np.invert(ia))
npy("want_unot", np.invert(ua))
npy("want_zero", np.zeros(5, np.int64))
npy("want_lnot", np.invert(lw))
# Float operands: ONNX's type constraint refuses them.
save("bitwise18_float", [
    helper.make_node("BitwiseAnd", ["x", "x"], ["y"], name="float_and")],
    [vi("x", [3])], [vi("y", [3])], 18)
# An attribute BitwiseNot does not have.
save("bitwise18_attr", [
    helper.make_node("BitwiseNot", ["x"], ["y"], name="odd_not", axis=1)],
    [vi("x", [3], I32)], [vi("y", [3], I32)], 18)

# Col2Im, opset 18: 2-D with strides, dilations and pads (blocks overlap
# and reach into the padding) against torch's fold, 3-D and 1-D against a
# loop over the blocks written here.
import torch  # noqa: E402


def col2im_loops(x, image, block, strides, dilations, pads):
    """pads as ONNX has them: the begins, then the ends."""
    k = len(block)
    grid = [(image[d] + pads[d] + pads[d + k] - dilations[d] * (block[d] - 1)
             - 1) // strides[d] + 1 for d in range(k)]
    n, ck, blocks = x.shape
    size = int(np.prod(block))
    y = np.zeros((n, ck // size) + tuple(image), np.float64)
    for l, at in enumerate(np.ndindex(*grid)):
        for e, offset in enumerate(np.ndindex(*block)):
            pos = tuple(at[d] * strides[d] - pads[d] + offset[d] * dilations[d]
                        for d in range(k))
            if all(0 <= pos[d] < image[d] for d in range(k)):
                y[(slice(None), slice(None)) + pos] += x[:, e::size, l]
    return y.astype(np.float32)


# The grid: ((7 + 2 - 3) // 2 + 1, (6 + 4 - 3) // 1 + 1) = (4, 8): 32 blocks.
cx = rng.standard_normal((2, 3 * 6, 32)).astype(np.float32)
npy("cx", cx)
want_fold = torch.nn.functional.fold(
    torch.from_numpy(cx), output_size=(7, 6), kernel_size=(2, 3),
    dilation=(2, 1), padding=(1, 2), stride=(2, 1)).numpy()
npy("want_fold", want_fold)
assert np.allclose(want_fold, col2im_loops(cx, [7, 6], [2, 3], [2, 1],
                                           [2, 1], [1, 2, 1, 2]), atol=1e-5)
c3 = rng.standard_normal((1, 2 * 8, 2 * 2 * 3)).astype(np.float32)
npy("c3", c3)
npy("want_c3", col2im_loops(c3, [3, 3, 4], [2, 2, 2], [1, 2, 1], [1, 1, 2],
                            [0, 1, 0, 0, 0, 1]))
c1 = rng.standard_normal((2, 4 * 3, 3)).astype(np.float32)
npy("c1", c1)
npy("want_c1", col2im_loops(c1, [8], [3], [2], [1], [0, 0]))
save("col2im18", [
    helper.make_node("Col2Im", ["cx", "image2", "block2"], ["fold"],
                     name="fold", strides=[2, 1], dilations=[2, 1],
                     pads=[1, 2, 1, 2]),
    helper.make_node("Col2Im", ["c3", "image3", "block3"], ["vol"],
                     name="vol", strides=[1, 2, 1], dilations=[1, 1, 2],
                     pads=[0, 1, 0, 0, 0, 1]),
    helper.make_node("Col2Im", ["c1", "image1", "block1"], ["line"],
                     name="line", strides=[2]),
], [vi("cx", [2, 18, 32]), vi("c3", [1, 16, 12]), vi("c1", [2, 12, 3])],
    [vi("fold", [2, 3, 7, 6]), vi("vol", [1, 2, 3, 3, 4]),
     vi("line", [2, 4, 8])], 18,
    [ints("image2", [7, 6]), ints("block2", [2, 3]),
     ints("image3", [3, 3, 4]), ints("block3", [2, 2, 2]),
     ints("image1", [8]), ints("block1", [3])])
# Refused: L that is not the number of blocks, block_shape known only at
# run time, and strides of the wrong length.
save("col2im18_blocks", [
    helper.make_node("Col2Im", ["cx", "image2", "block2"], ["y"],
                     name="bad_l")],
    [vi("cx", [2, 18, 30])], [vi("y", [2, 3, 7, 6])], 18,
    [ints("image2", [7, 6]), ints("block2", [2, 3])])
save("col2im18_dynamic", [
    helper.make_node("Col2Im", ["cx", "image2", "block"], ["y"],
                     name="dyn_block")],
    [vi("cx", [2, 18, 32]), vi("block", [2], I64)], [vi("y", ["n", "c", "h", "w"])], 18,
    [ints("image2", [7, 6])])
save("col2im18_strides", [
    helper.make_node("Col2Im", ["cx", "image2", "block2"], ["y"],
                     name="bad_strides", strides=[2, 1, 1])],
    [vi("cx", [2, 18, 32])], [vi("y", ["n", "c", "h", "w"])], 18,
    [ints("image2", [7, 6]), ints("block2", [2, 3])])

# CenterCropPad, opset 18: crop and pad by odd and even amounts on the axes
# named (negative ones too), all axes by default, on floats and integers.


def center_crop_pad(x, sizes, axes=None):
    """The centred window as ONNX's reference computes it: a surplus's odd
    element stays at the end."""
    axes = range(x.ndim) if axes is None else [a % x.ndim for a in axes]
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    shape = list(x.shape)
    for a, size in zip(axes, sizes):
        dim = x.shape[a]
        if size < dim:
            begin = (dim - size) // 2
            src[a] = slice(begin, begin + size)
        elif size > dim:
            begin = (size - dim) // 2
            dst[a] = slice(begin, begin + dim)
        shape[a] = size
    y = np.zeros(shape, x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y


cp = rng.standard_normal((2, 5, 6, 4)).astype(np.float32)
cpi = rng.integers(-9, 9, (3, 4)).astype(np.int64)
npy("cp", cp)
npy("cpi", cpi)
save("center_crop_pad18", [
    helper.make_node("CenterCropPad", ["cp", "s1"], ["mixed"], name="mixed",
                     axes=[1, -2, 3]),
    helper.make_node("CenterCropPad", ["cpi", "s2"], ["all"], name="all"),
    helper.make_node("CenterCropPad", ["cp", "s3"], ["same"], name="same",
                     axes=[0]),
], [vi("cp", [2, 5, 6, 4]), vi("cpi", [3, 4], I64)],
    [vi("mixed", [2, 2, 9, 3]), vi("all", [6, 1], I64),
     vi("same", [2, 5, 6, 4])], 18,
    [ints("s1", [2, 9, 3]), numpy_helper.from_array(
        np.array([6, 1], np.int32), "s2"), ints("s3", [2])])
npy("want_mixed", center_crop_pad(cp, [2, 9, 3], [1, -2, 3]))
npy("want_all", center_crop_pad(cpi, [6, 1]))
npy("want_same", cp)
# Refused: a shape of the wrong length, and a dynamic axis.
save("center_crop_pad18_count", [
    helper.make_node("CenterCropPad", ["cp", "s1"], ["y"], name="bad_count",
                     axes=[1, 2])],
    [vi("cp", [2, 5, 6, 4])], [vi("y", ["n", "c", "h", "w"])], 18, [ints("s1", [2, 9, 3])])
save("center_crop_pad18_dynamic", [
    helper.make_node("CenterCropPad", ["cp", "s1"], ["y"], name="dyn_axis",
                     axes=[0])],
    [vi("cp", ["n", 5, 6, 4])], [vi("y", ["n", "c", "h", "w"])], 18, [ints("s1", [1])])

# AffineGrid, opset 20: 2-D (a dynamic batch, align_corners 0) feeding
# GridSample as a spatial transformer does, 3-D with align_corners 1, and
# 3-D with a size-1 axis (align_corners 0: its centre, 0), against torch's
# affine_grid and grid_sample.
theta2 = rng.standard_normal((3, 2, 3)).astype(np.float32)
theta3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
image = rng.standard_normal((3, 2, 5, 6)).astype(np.float32)
npy("theta2", theta2)
npy("theta3", theta3)
npy("image", image)
grid2 = torch.nn.functional.affine_grid(
    torch.from_numpy(theta2), [3, 2, 4, 7], align_corners=False)
npy("want_grid2", grid2.numpy())
npy("want_warped", torch.nn.functional.grid_sample(
    torch.from_numpy(image), grid2, mode="bilinear", padding_mode="zeros",
    align_corners=False).numpy())
npy("want_grid3", torch.nn.functional.affine_grid(
    torch.from_numpy(theta3), [2, 1, 3, 2, 5], align_corners=True).numpy())
npy("want_grid3u", torch.nn.functional.affine_grid(
    torch.from_numpy(theta3), [2, 1, 1, 4, 3], align_corners=False).numpy())
save("affine_grid20", [
    helper.make_node("AffineGrid", ["theta2", "size2"], ["grid2"],
                     name="grid2"),
    helper.make_node("GridSample", ["image", "grid2"], ["warped"],
                     name="warp", mode="linear"),
    helper.make_node("AffineGrid", ["theta3", "size3"], ["grid3"],
                     name="grid3", align_corners=1),
    helper.make_node("AffineGrid", ["theta3", "size3u"], ["grid3u"],
                     name="grid3u"),
], [vi("theta2", ["n", 2, 3]), vi("image", ["n", 2, 5, 6]),
    vi("theta3", [2, 3, 4])],
    [vi("grid2", ["n", 4, 7, 2]), vi("warped", ["n", 2, 4, 7]),
     vi("grid3", [2, 3, 2, 5, 3]), vi("grid3u", [2, 1, 4, 3, 3])], 20,
    [ints("size2", [3, 2, 4, 7]), ints("size3", [2, 1, 3, 2, 5]),
     ints("size3u", [2, 1, 1, 4, 3])])
# Refused: theta of a 3-D grid with a 2-D size, align_corners 2, and a
# size-1 axis with align_corners 1 (no position is both corners: ONNX's
# reference divides by zero there, PyTorch gives 0, ONNX Runtime 1).
save("affine_grid20_rank", [
    helper.make_node("AffineGrid", ["theta3", "size2"], ["y"],
                     name="bad_theta")],
    [vi("theta3", [2, 3, 4])], [vi("y", ["n", "c", "h", "w"])], 20,
    [ints("size2", [2, 2, 4, 7])])
save("affine_grid20_align", [
    helper.make_node("AffineGrid", ["theta2", "size2"], ["y"],
                     name="bad_align", align_corners=2)],
    [vi("theta2", [3, 2, 3])], [vi("y", ["n", "c", "h", "w"])], 20,
    [ints("size2", [3, 2, 4, 7])])
save("affine_grid20_unit", [
    helper.make_node("AffineGrid", ["theta2", "size2"], ["y"],
                     name="unit_align", align_corners=1)],
    [vi("theta2", [3, 2, 3])], [vi("y", ["n", "c", "h", "w"])], 20,
    [ints("size2", [3, 2, 1, 7])])

# DeformConv, opset 19, against torchvision's deform_conv2d: offsets of
# several pixels (taps reading outside the image), a mask, bias, groups,
# offset groups, strides, dilations and pads; and without B and mask.
import torchvision  # noqa: E402

dx = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
dw = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
db = rng.standard_normal((6,)).astype(np.float32)
# Output: ((7 + 2 - (2 * 2 + 1)) // 2 + 1, (6 + 2 - 2) // 1 + 1) = (3, 7).
doff = (3 * rng.standard_normal((2, 2 * 2 * 3 * 2, 3, 7))).astype(np.float32)
dmask = rng.random((2, 2 * 3 * 2, 3, 7)).astype(np.float32)
dw1 = rng.standard_normal((3, 4, 2, 2)).astype(np.float32)
doff1 = (2 * rng.standard_normal((2, 2 * 2 * 2, 6, 5))).astype(np.float32)
for name, value in [("dx", dx), ("dw", dw), ("db", db), ("doff", doff),
                    ("dmask", dmask), ("dw1", dw1), ("doff1", doff1)]:
    npy(name, value)
t = torch.from_numpy
npy("want_deform", torchvision.ops.deform_conv2d(
    t(dx), t(doff), t(dw), t(db), stride=(2, 1), padding=(1, 1),
    dilation=(2, 1), mask=t(dmask)).numpy())
npy("want_deform_plain", torchvision.ops.deform_conv2d(
    t(dx), t(doff1), t(dw1)).numpy())
# torchvision pads both sides alike: ONNX's [top, left, bottom, right].
save("deform_conv19", [
    helper.make_node("DeformConv", ["dx", "dw", "doff", "db", "dmask"],
                     ["deform"], name="deform", strides=[2, 1],
                     dilations=[2, 1], pads=[1, 1, 1, 1], group=2,
                     offset_group=2, kernel_shape=[3, 2]),
    helper.make_node("DeformConv", ["dx", "dw1", "doff1"], ["plain"],
                     name="plain"),
], [vi("dx", [2, 4, 7, 6]), vi("dw", [6, 2, 3, 2]), vi("db", [6]),
    vi("doff", [2, 24, 3, 7]), vi("dmask", [2, 12, 3, 7]),
    vi("dw1", [3, 4, 2, 2]), vi("doff1", [2, 8, 6, 5])],
    [vi("deform", [2, 6, 3, 7]), vi("plain", [2, 3, 6, 5])], 19)
# Refused: offsets for another output size, a kernel_shape W does not have,
# and 1-D data.
save("deform_conv19_offset", [
    helper.make_node("DeformConv", ["dx", "dw1", "doff1"], ["y"],
                     name="bad_offset", strides=[2, 2])],
    [vi("dx", [2, 4, 7, 6]), vi("dw1", [3, 4, 2, 2]),
     vi("doff1", [2, 8, 6, 5])], [vi("y", ["n", "c", "h", "w"])], 19)
save("deform_conv19_kernel", [
    helper.make_node("DeformConv", ["dx", "dw1", "doff1"], ["y"],
                     name="bad_kernel", kernel_shape=[3, 3])],
    [vi("dx", [2, 4, 7, 6]), vi("dw1", [3, 4, 2, 2]),
     vi("doff1", [2, 8, 6, 5])], [vi("y", ["n", "c", "h", "w"])], 19)
save("deform_conv19_1d", [
    helper.make_node("DeformConv", ["x1", "w1", "o1"], ["y"], name="line")],
    [vi("x1", [1, 2, 8]), vi("w1", [2, 2, 3]), vi("o1", [1, 3, 6])],
    [vi("y", ["n", "c", "w"])], 19)
