#!/usr/bin/python3
"""One epoch of the MNIST CNN on Fashion-MNIST from Python
(gopt.TrainingSession over a gopt.DataLoader) against `gopt-run --train`
with the same options and seed: the test accuracies must agree within 0.5
points.

  /usr/bin/python3 benchmarks/python/train_epoch.py [--build-dir build]
      [--onnx mnist_cnn.onnx] [--threads 2] [--out FILE.json]

Needs Debian's dataset-fashion-mnist. The result is quoted in
docs/python.md; python/tests/test_training.py checks the same equivalence
on a few steps in the test suite.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from mnist import import_gopt, mnist_cnn_onnx  # noqa: E402

SEED, BATCH, LR = 1234, 64, 0.001


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--onnx")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    gopt = import_gopt(args.build_dir)
    gopt_run = os.path.abspath(os.path.join(args.build_dir, "bin", "gopt-run"))

    with tempfile.TemporaryDirectory(prefix="gopt-epoch-") as tmp:
        model = mnist_cnn_onnx(tmp, args.onnx)
        start = time.time()
        cli = subprocess.run(
            [gopt_run, model, "--train", "--data", "fashion-mnist", "--eval",
             "--epochs", "1", "--batch", str(BATCH), "--seed", str(SEED),
             "--lr", str(LR), "--threads", str(args.threads)],
            check=True, capture_output=True, text=True).stdout
        cli_seconds = time.time() - start
        cli_accuracy = float(re.search(r"test accuracy ([\d.]+)%", cli).group(1))
        print(f"gopt-run --train: test accuracy {cli_accuracy:.2f}% "
              f"({cli_seconds:.0f} s)", flush=True)

        start = time.time()
        session = gopt.TrainingSession(model, optimizer="adam", lr=LR,
                                       batch_size=BATCH, seed=SEED,
                                       threads=args.threads)
        loader = session.data("fashion-mnist", batch_size=BATCH, seed=SEED,
                              epochs=1)
        losses = [session.step(x, y) for x, y in loader]
        result = session.evaluate(data="fashion-mnist-test")
        py_seconds = time.time() - start
        py_accuracy = 100 * result["accuracy"]
        print(f"gopt.TrainingSession: {len(losses)} steps, final loss "
              f"{losses[-1]:.4f}, test accuracy {py_accuracy:.2f}% "
              f"({py_seconds:.0f} s)")
        print(f"input pipeline: {loader.verdict()}")

    difference = py_accuracy - cli_accuracy
    ok = abs(difference) <= 0.5
    print(f"difference {difference:+.2f} points: "
          f"{'ok (within 0.5)' if ok else 'MISMATCH'}")
    out = args.out or os.path.join(
        os.path.dirname(__file__), "..", "results",
        "python-train-epoch-" +
        datetime.datetime.utcnow().strftime("%Y-%m-%d-%H%M") + ".json")
    with open(out, "w") as f:
        json.dump({"model": "mnist_cnn", "data": "fashion-mnist", "epochs": 1,
                   "batch": BATCH, "seed": SEED, "lr": LR,
                   "threads": args.threads,
                   "gopt_run_accuracy": cli_accuracy,
                   "python_accuracy": py_accuracy, "difference": difference,
                   "gopt_run_seconds": cli_seconds,
                   "python_seconds": py_seconds,
                   "input_pipeline": loader.stats()}, f, indent=2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
