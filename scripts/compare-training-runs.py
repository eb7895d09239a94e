#!/usr/bin/env python3
"""Compares two `gopt-run --train` runs of the same plan on the same data.

    compare-training-runs.py [--adam LR] REF.log REF_PARAMS GOT.log GOT_PARAMS

REF/GOT.log hold gopt-run's output with --log-every 1 (one "step K/N  loss
X" line per step); *_PARAMS are the --save-params directories. Exits 1 when
the loss curves or the final parameters differ beyond the tolerance below.
Standard library only (the GPU machine's Python may lack numpy).

Tolerance: the two backends sum in different orders (cuDNN/cuBLASLt with
TF32 off and block-tree reductions against oneDNN's and OpenMP's loops),
about 1e-6 relative per op; over 10 steps that stays near 1e-5 of a
tensor's scale. A wrong kernel moves a parameter by the order of its
updates, which over 10 steps at the bundle's learning rates is a few
percent of its scale. So a parameter element may differ by 1e-3 of the
tensor's largest magnitude (+1e-6), and a loss by 1e-3 relative (+1e-4,
gopt-run prints 4 decimals). Adam divides by sqrt(v) + 1e-8: an element
whose gradient is within rounding noise of 0 takes a step of about +-LR
whose sign the summation order decides, so with --adam LR an element may
exceed the tolerance if it stays within the most such steps can move it
(2 * LR per step), and up to 3% of a tensor's elements may (they are
counted and reported, as train-mnist-pytorch.test does against PyTorch).
On the H200, 3 of the 144 weights of a first conv layer (one input
channel: short sums, many gradients near 0) differed by 7.6e-4 after 10
Adam steps at LR 1e-3. A wrong kernel moves most elements, not a few.
"""
import os
import re
import struct
import sys


def losses(path):
    with open(path) as f:
        return [float(m.group(1)) for m in
                re.finditer(r"step \d+/\d+\s+loss ([-0-9.eE+naif]+)", f.read())]


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        header_len = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        header_len = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = data[start:start + header_len].decode("latin1")
    if "'<f4'" not in header or "'fortran_order': False" not in header:
        raise ValueError("%s: expected little-endian f32, C order: %s" %
                         (path, header))
    body = data[start + header_len:]
    return struct.unpack("<%df" % (len(body) // 4), body)


def main():
    args = sys.argv[1:]
    adam_lr = None
    if "--adam" in args:
        i = args.index("--adam")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        adam_lr = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 4:
        sys.exit(__doc__)
    ref_log, ref_dir, got_log, got_dir = args
    ok = True
    ref_losses, got_losses = losses(ref_log), losses(got_log)
    if not ref_losses or len(ref_losses) != len(got_losses):
        print("loss curves: %d and %d steps logged" %
              (len(ref_losses), len(got_losses)))
        return 1
    for step, (r, g) in enumerate(zip(ref_losses, got_losses), 1):
        if not abs(g - r) <= 1e-4 + 1e-3 * abs(r):
            print("step %d: loss %g, reference %g" % (step, g, r))
            ok = False
    print("loss curve (%d steps): %s" % (
        len(ref_losses), " ".join("%.4f" % v for v in got_losses)))
    if not ref_losses[-1] < ref_losses[0]:
        print("the reference loss did not fall")
        ok = False
    names = sorted(n for n in os.listdir(ref_dir) if n.endswith(".npy"))
    if not names:
        print("no parameters in %s" % ref_dir)
        return 1
    for name in names:
        ref = read_npy(os.path.join(ref_dir, name))
        got = read_npy(os.path.join(got_dir, name))
        if len(ref) != len(got):
            print("%s: %d vs. %d elements" % (name, len(got), len(ref)))
            ok = False
            continue
        scale = max(abs(v) for v in ref)
        tol = 1e-6 + 1e-3 * scale
        diffs = [abs(a - b) for a, b in zip(got, ref)]
        worst = max(diffs)
        over = sum(1 for d in diffs if not d <= tol)
        passed = over == 0
        if adam_lr is not None:
            # Beyond the tolerance, still within the flipped-steps bound.
            bound = tol + 2 * adam_lr * len(ref_losses)
            far = sum(1 for d in diffs if not d <= bound)
            passed = far == 0 and over <= (3 * len(ref)) // 100
        print("%-40s %8d values, max |diff| %.3g (scale %.3g), %d beyond "
              "%.3g: %s" % (name, len(ref), worst, scale, over, tol,
                            "ok" if passed else "FAILED"))
        ok &= passed
    print("parameters match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
