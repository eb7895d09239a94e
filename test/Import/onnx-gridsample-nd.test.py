"""Writes GridSample-20 models over 3-D volumes ([N, C, D, H, W]) and 1-D
signals ([N, C, W]) in every mode, padding mode and corner alignment, with
the expected outputs of a numpy transcription of ONNX's reference
implementation, itself checked against PyTorch's grid_sample on the linear
and nearest volumes (the cubic volumes have no other oracle: ONNX Runtime
samples volumes linearly or by nearest only, and PyTorch has no bicubic
volume sampling).

  onnx-gridsample-nd.test.py OUT              writes models and arrays
  onnx-gridsample-nd.test.py compare GOT WANT  prints NAME: ok|MISMATCH for
                                              each GOT/NAME.npy against
                                              WANT/want_NAME.npy
"""
import itertools
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from later_opset_models import Writer, vi  # noqa: E402

MODES = ["linear", "nearest", "cubic"]
PADDINGS = ["zeros", "border", "reflection"]


def reflect(x, lo, hi):
    rng = hi - lo
    if rng <= 0:
        return lo
    if x < lo:
        dx = lo - x
        n = int(dx / rng)
        r = dx - n * rng
        return lo + r if n % 2 == 0 else hi - r
    if x > hi:
        dx = x - hi
        n = int(dx / rng)
        r = dx - n * rng
        return hi - r if n % 2 == 0 else lo + r
    return x


def cubic(t):
    a = -0.75
    t = abs(t)
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


def grid_sample(x, grid, mode, padding, align):
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    r = len(sizes)
    lo = [0.0 if align else -0.5] * r
    hi = [s - 1.0 if align else s - 0.5 for s in sizes]
    out = np.zeros((n, c) + grid.shape[1:-1], np.float64)
    for b in range(n):
        for o in np.ndindex(*grid.shape[1:-1]):
            g = grid[(b,) + o]
            pos = []
            for d in range(r):
                v = float(g[r - 1 - d])
                s = sizes[d]
                p = (v + 1) / 2 * (s - 1) if align else ((v + 1) * s - 1) / 2
                pos.append(float(np.rint(p)) if mode == "nearest" else p)
            if any(p < l or p > h for p, l, h in zip(pos, lo, hi)):
                if padding == "border":
                    pos = [min(max(p, 0.0), s - 1.0) for p, s in zip(pos, sizes)]
                elif padding == "reflection":
                    pos = [reflect(p, l, h) for p, l, h in zip(pos, lo, hi)]
            taps = []
            for p in pos:
                if mode == "nearest":
                    taps.append([(int(p), 1.0)])
                elif mode == "linear":
                    i0 = int(np.floor(p))
                    taps.append([(i0, i0 + 1 - p), (i0 + 1, p - i0)])
                else:
                    i0 = int(np.floor(p)) - 1
                    taps.append(list(zip(range(i0, i0 + 4), cubic(p - i0 - 1))))

            def read(index, ch):
                idx = []
                for i, s, l, h in zip(index, sizes, lo, hi):
                    if padding == "zeros":
                        if i < 0 or i >= s:
                            return 0.0
                    else:
                        if padding == "reflection":
                            i = int(reflect(float(i), l, h))
                        i = min(max(i, 0), s - 1)
                    idx.append(i)
                return float(x[(b, ch) + tuple(idx)])

            for ch in range(c):
                v = 0.0
                for combo in itertools.product(*taps):
                    w = 1.0
                    for _, wt in combo:
                        w *= wt
                    v += w * read([i for i, _ in combo], ch)
                out[(b, ch) + o] = v
    return out.astype(np.float32)


def compare(got_dir, want_dir):
    for name in sorted(os.listdir(got_dir)):
        if not name.endswith(".npy"):
            continue
        got = np.load(os.path.join(got_dir, name))
        want = np.load(os.path.join(want_dir, "want_" + name))
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4,
                                                     atol=1e-5)
        print("%s: %s" % (name[:-4], "ok" if ok else "MISMATCH"))


def check_against_torch(x, g, mode, padding, align, want):
    import torch
    got = torch.nn.functional.grid_sample(
        torch.from_numpy(x), torch.from_numpy(g),
        mode="bilinear" if mode == "linear" else mode, padding_mode=padding,
        align_corners=bool(align)).numpy()
    same = np.isclose(got, want, rtol=1e-4, atol=1e-5)
    if mode == "nearest":
        # PyTorch 1.13 rounds a volume's tie (a position halfway between
        # two elements) away from zero, ONNX to even: skip the ties.
        sizes = np.array(x.shape[:1:-1], np.float64)  # innermost first
        pos = ((g + 1) * sizes - 1) / 2 if not align else (g + 1) / 2 * (sizes - 1)
        tie = np.any(np.abs(pos - np.floor(pos) - 0.5) < 1e-6, axis=-1)
        same |= tie[:, None]
    assert same.all(), (mode, padding, align)


def main():
    if sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
        return
    w = Writer(sys.argv[1])
    rng = np.random.default_rng(20)
    cases = {"vol": ((2, 2, 4, 5, 6), (2, 3, 4, 2, 3)),
             "sig": ((2, 3, 7), (2, 5, 1))}
    for prefix, (xshape, gshape) in cases.items():
        x = rng.standard_normal(xshape).astype(np.float32)
        # Positions past both edges exercise every padding mode; one lands
        # exactly on a pixel centre.
        g = rng.uniform(-1.3, 1.3, gshape).astype(np.float32)
        g.reshape(-1)[0] = 0.0
        w.npy(prefix + "_x", x)
        w.npy(prefix + "_g", g)
        nodes, outs = [], []
        for mode, padding, align in itertools.product(MODES, PADDINGS, (0, 1)):
            name = "%s_%s_%s_%d" % (prefix, mode, padding, align)
            nodes.append(helper.make_node(
                "GridSample", ["x", "g"], [name], name=name, mode=mode,
                padding_mode=padding, align_corners=align))
            outs.append(vi(name, ["d%d" % i for i in range(len(xshape))]))
            want = grid_sample(x, g, mode, padding, align)
            if prefix == "vol" and mode != "cubic":
                check_against_torch(x, g, mode, padding, align, want)
            w.npy("want_" + name, want)
        inputs = [vi("x", list(xshape)), vi("g", list(gshape))]
        w.save("gridsample_" + prefix, nodes, inputs, outs, opset=20)
        # What ONNX Runtime also runs: the linear and nearest volumes.
        if prefix == "vol":
            keep = [i for i, n in enumerate(nodes) if "cubic" not in n.name]
            w.save("gridsample_vol_ort", [nodes[i] for i in keep], inputs,
                   [outs[i] for i in keep], opset=20)


if __name__ == "__main__":
    main()
