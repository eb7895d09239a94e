"""Writes masked.mlir and unmasked.mlir (deform_conv2d_grad of x, w, offset,
[mask], dy), their inputs and torchvision's gradients (autograd of
torchvision.ops.deform_conv2d in double) into the directory given. Without a
mask, dmask is the gradient of an all-ones mask."""
import os
import sys

import numpy as np
import torch
from torchvision.ops import deform_conv2d

out = sys.argv[1]
rng = np.random.default_rng(3)
N, C, H, W, COUT, KH, KW, G, OG = 2, 4, 6, 7, 6, 3, 3, 2, 2
STRIDES, DILATIONS, PADS = (2, 1), (1, 2), (1, 1, 2, 1)  # top, bottom, left, right
# torchvision pads symmetrically: pad the image itself for the uneven pads.
HO = (H + PADS[0] + PADS[1] - (DILATIONS[0] * (KH - 1) + 1)) // STRIDES[0] + 1
WO = (W + PADS[2] + PADS[3] - (DILATIONS[1] * (KW - 1) + 1)) // STRIDES[1] + 1
x = rng.uniform(-1, 1, (N, C, H, W)).astype(np.float32)
w = rng.uniform(-1, 1, (COUT, C // G, KH, KW)).astype(np.float32)
# Offsets away from integers (kinks): +-(0.1..0.9) plus an integer part.
frac = rng.uniform(0.1, 0.9, (N, OG * 2 * KH * KW, HO, WO))
whole = rng.integers(-2, 2, (N, OG * 2 * KH * KW, HO, WO))
offset = (whole + frac * rng.choice([-1, 1], frac.shape)).astype(np.float32)
mask = rng.uniform(0, 1, (N, OG * KH * KW, HO, WO)).astype(np.float32)
dy = rng.uniform(-1, 1, (N, COUT, HO, WO)).astype(np.float32)


def grads(with_mask):
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    to = torch.tensor(offset, dtype=torch.float64, requires_grad=True)
    tm = torch.tensor(mask if with_mask else np.ones_like(mask),
                      dtype=torch.float64, requires_grad=True)
    padded = torch.nn.functional.pad(tx, (PADS[2], PADS[3], PADS[0], PADS[1]))
    y = deform_conv2d(padded, to, tw, stride=STRIDES, padding=(0, 0),
                      dilation=DILATIONS, mask=tm)
    assert tuple(y.shape) == (N, COUT, HO, WO), y.shape
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return [t.grad.numpy().astype(np.float32) for t in (tx, tw, to, tm)]


def module(with_mask):
    def t(shape):
        return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"
    xs, ws, os_, ms, ys = (t(x.shape), t(w.shape), t(offset.shape),
                           t(mask.shape), t(dy.shape))
    args = [f'%x: {xs} {{gopt.name = "x"}}', f'%w: {ws} {{gopt.name = "w"}}',
            f'%offset: {os_} {{gopt.name = "offset"}}',
            f'%dy: {ys} {{gopt.name = "dy"}}']
    operands, types = "%x, %w, %offset, %dy", f"{xs}, {ws}, {os_}, {ys}"
    if with_mask:
        args.append(f'%mask: {ms} {{gopt.name = "mask"}}')
        operands += ", %mask"
        types += f", {ms}"
    results = (f'{xs} {{gopt.name = "dx"}}, {ws} {{gopt.name = "dw"}}, '
               f'{os_} {{gopt.name = "doffset"}}, {ms} {{gopt.name = "dmask"}}')
    return (f'func.func @main({", ".join(args)}) -> ({results}) {{\n'
            f'  %dx, %dw, %doff, %dm = gopt.deform_conv2d_grad {operands} '
            f'{{strides = array<i64: {STRIDES[0]}, {STRIDES[1]}>, '
            f'dilations = array<i64: {DILATIONS[0]}, {DILATIONS[1]}>, '
            f'pads = array<i64: {", ".join(map(str, PADS))}>, '
            f'group = {G} : i64, offset_group = {OG} : i64}} : ({types}) -> '
            f'({xs}, {ws}, {os_}, {ms})\n'
            f'  return %dx, %dw, %doff, %dm : {xs}, {ws}, {os_}, {ms}\n}}\n')


for name, value in [("x", x), ("w", w), ("offset", offset), ("mask", mask),
                    ("dy", dy)]:
    np.save(os.path.join(out, name + ".npy"), value)
for suffix, with_mask in [("", True), ("1", False)]:
    for name, value in zip(["dx", "dw", "doffset", "dmask"], grads(with_mask)):
        np.save(os.path.join(out, name + suffix + ".npy"), value)
with open(os.path.join(out, "masked.mlir"), "w") as f:
    f.write(module(True))
with open(os.path.join(out, "unmasked.mlir"), "w") as f:
    f.write(module(False))
