#!/usr/bin/python3
"""One training step of the MNIST CNN in gopt and in PyTorch, from the same
weights (mnist_cnn.onnx) on the same first batch of Fashion-MNIST: the new
parameters must agree within --rtol (relative, default 1e-4).

  compare_one_step.py --gopt-run build/bin/gopt-run --onnx mnist_cnn.onnx
                      [--optimizer adam|sgd] [--lr X] [--work DIR]

Adam's first step moves every element by lr * g / (|g| + 1e-8): where a
gradient is within ~100x of epsilon that quotient depends on the last bits
of g (summation order), so those elements (|update| < 0.99 lr) are counted
and reported, not compared. SGD has no such elements.
Exit status 0 when they agree, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gopt-run", required=True)
    p.add_argument("--onnx", required=True)
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-7)
    p.add_argument("--work")
    args = p.parse_args()
    lr = args.lr or (1e-3 if args.optimizer == "adam" else 0.1)
    work = args.work or tempfile.mkdtemp(prefix="gopt-one-step-")
    torch_dir, gopt_dir = os.path.join(work, "torch"), os.path.join(work, "gopt")
    subprocess.run([sys.executable, os.path.join(HERE, "torch_mnist.py"),
                    "one-step", "--onnx", args.onnx, "--out", torch_dir,
                    "--optimizer", args.optimizer, "--lr", str(lr)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([args.gopt_run, args.onnx, "--train", "--data",
                    "fashion-mnist", "--steps", "1", "--no-shuffle", "--batch",
                    "64", "--optimizer", args.optimizer, "--lr", str(lr),
                    "--save-params", gopt_dir], check=True,
                   stdout=subprocess.DEVNULL)
    initial = {i.name: onnx.numpy_helper.to_array(i)
               for i in onnx.load(args.onnx).graph.initializer}
    ok = True
    for name in sorted(os.listdir(torch_dir)):
        want = np.load(os.path.join(torch_dir, name))
        got = np.load(os.path.join(gopt_dir, name))
        if want.shape != got.shape:
            print(f"{name}: shape {got.shape}, PyTorch {want.shape}: MISMATCH")
            ok = False
            continue
        # Adam's ill-conditioned elements (see above): |update| < 0.99 lr.
        mask = np.ones(want.shape, bool)
        if args.optimizer == "adam":
            update = want - initial[name[:-4]]
            mask = np.abs(update) >= 0.99 * lr
        err = np.abs(got - want)
        outside = err > args.atol + args.rtol * np.abs(want)
        bad = outside & mask
        unchecked = (outside & ~mask).sum()
        print(f"{name[:-4]:20s} {want.size:8d} values, max abs difference "
              f"{err[mask].max(initial=0.0):.2e}, "
              f"{bad.sum()} outside rtol {args.rtol:g}"
              + (f" ({unchecked} more where |grad| ~ Adam's epsilon)"
                 if unchecked else "")
              + (": ok" if not bad.any() else ": MISMATCH"))
        ok &= not bad.any()
    print("one step matches PyTorch" if ok else "ONE STEP DIFFERS FROM PYTORCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
