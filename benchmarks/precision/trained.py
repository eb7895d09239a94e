#!/usr/bin/python3
"""Accuracy of gopt's lower precisions on a trained model and real data.

  benchmarks/precision/trained.py [--build-dir build] [--epochs 2]
                                  [--calibration-images 1024] [--no-readme]
                                  [--out benchmarks/results/precision-trained-DATE.json]
  benchmarks/precision/trained.py --from-json RESULTS.json   (README only)

The shared reference models have random weights: they give every input
almost the same scores (ResNet-18 picks class 115 for all of them), so
agreement with f32 on them says little. This script measures what a user
cares about instead, on a network that has learned something:

1. gopt trains ../shared/models/mnist_cnn.onnx on Fashion-MNIST
   (`gopt-run --train --data fashion-mnist --save-params`), and the trained
   parameters replace the ONNX file's initializers (python3-onnx);
2. each precision is compiled to a plan as benchmarks/precision/run.py does
   (f32, bf16, weight-only int8, and static int8 calibrated with each of
   gopt-run's methods on the first --calibration-images training images);
3. every plan classifies the 10,000 test images (gopt-run --output-dir);
   the table gives test accuracy, the change from f32, top-1 agreement
   with the f32 plan and the SQNR of the logits against f32's.

Writes the JSON and the README's trained-model table (between the
precision-trained markers) unless --no-readme. Progress goes to a terminal
only. A benchmark, not a test: it needs Debian's dataset-fashion-mnist.
"""
import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
BEGIN, END = "<!-- precision-trained:begin -->", "<!-- precision-trained:end -->"
DATA = "/usr/share/datasets/fashion-mnist"
OPTIMIZE = "gopt-optimize{target=cpu}"
CONFIGS = [
    ("f32", f"builtin.module({OPTIMIZE})"),
    ("bf16", "builtin.module(gopt-optimize{target=cpu precision=bf16})"),
    ("weight-int8", f"builtin.module({OPTIMIZE},func.func(gopt-quantize-weights))"),
]
METHODS = ["minmax", "percentile", "entropy"]


def log(msg):
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ...: exit {r.returncode}: "
                           f"{(r.stderr or r.stdout).strip()[-600:]}")
    return r.stdout


def read_idx(path):
    """An IDX file (gzip) as a numpy array."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def images_npy(kind, count, path):
    """The first `count` images of Fashion-MNIST's `kind` set as [N,1,28,28]
    f32 in [0, 1], as gopt-run --data fashion-mnist feeds them."""
    x = read_idx(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz"))[:count]
    np.save(path, (x.astype(np.float32) / 255.0)[:, None, :, :])


def trained_onnx(model, params_dir, out):
    """`model` with every initializer that gopt trained replaced."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    replaced = 0
    for init in m.graph.initializer:
        path = os.path.join(params_dir, init.name + ".npy")
        if os.path.exists(path):
            value = np.load(path)
            if list(value.shape) != list(init.dims):
                raise RuntimeError(f"{path}: shape {value.shape}, the model's {list(init.dims)}")
            init.CopyFrom(numpy_helper.from_array(value.astype(np.float32), init.name))
            replaced += 1
    if replaced == 0:
        raise RuntimeError(f"no parameter of {model} in {params_dir}")
    onnx.save(m, out)
    return replaced


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calibration-images", type=int, default=1024)
    p.add_argument("--work", default=os.path.join(BENCH, "work", "precision-trained"))
    p.add_argument("--out", default=None)
    p.add_argument("--no-readme", action="store_true")
    p.add_argument("--from-json")
    a = p.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            write_readme(json.load(f), a.no_readme)
        return 0
    build = a.build_dir if os.path.isabs(a.build_dir) else os.path.join(ROOT, a.build_dir)
    bins = {t: os.path.join(build, "bin", t) for t in ("gopt-run", "gopt-opt", "gopt-translate")}
    model = os.path.join(a.models_dir, "mnist_cnn.onnx")
    if not os.path.exists(model):
        print(f"precision-trained: no {model}: nothing to measure", file=sys.stderr)
        return 0
    if not os.path.isdir(DATA):
        print(f"precision-trained: no {DATA} (apt install dataset-fashion-mnist)",
              file=sys.stderr)
        return 1
    os.makedirs(a.work, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    out = a.out or os.path.join(
        BENCH, "results", f"precision-trained-{started.strftime('%Y-%m-%d-%H%M')}.json")

    log(f"training mnist_cnn on Fashion-MNIST, {a.epochs} epochs")
    params = os.path.join(a.work, "params")
    train_log = sh([bins["gopt-run"], model, "--train", "--data", "fashion-mnist",
                    "--epochs", str(a.epochs), "--threads", str(a.threads),
                    "--save-params", params])
    trained = os.path.join(a.work, "mnist_cnn_fashion.onnx")
    replaced = trained_onnx(model, params, trained)

    test_x = os.path.join(a.work, "test-images.npy")
    calib_x = os.path.join(a.work, "calibration-images.npy")
    images_npy("t10k", 10000, test_x)
    images_npy("train", a.calibration_images, calib_x)
    labels = read_idx(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)

    configs = list(CONFIGS)
    calibration = {}
    for method in METHODS:
        ranges = os.path.join(a.work, f"ranges-{method}.json")
        log(f"calibrating ({method}) on {a.calibration_images} training images")
        summary = sh([bins["gopt-run"], trained, "--pipeline", f"builtin.module({OPTIMIZE})",
                      "--calibrate", "--calibration-out", ranges,
                      "--calibration-method", method, "--input", "input=" + calib_x,
                      "--batch", "256", "--threads", str(a.threads)])
        calibration[method] = summary.strip().splitlines()[-1]
        configs.append((f"static-int8 ({method})",
                        f"builtin.module({OPTIMIZE},func.func(gopt-quantize{{calibration={ranges}}}))"))

    logits = {}
    rows = []
    for name, pipeline in configs:
        log(f"{name}: compile and classify the 10,000 test images")
        stem = os.path.join(a.work, name.replace(" ", "_").replace("(", "").replace(")", ""))
        sh([bins["gopt-opt"], trained, "--pass-pipeline=" + pipeline, "-o", stem + ".mlir"])
        sh([bins["gopt-translate"], "--emit-plan", stem + ".mlir", "-o", stem + ".gplan"])
        outdir = stem + ".out"
        sh([bins["gopt-run"], stem + ".gplan", "--input", "input=" + test_x,
            "--batch", "10000", "--warmup", "0", "--iterations", "1",
            "--threads", str(a.threads), "--output-dir", outdir])
        y = np.load(os.path.join(outdir, "output.npy")).astype(np.float64)
        logits[name] = y
        f32 = logits["f32"]
        row = {"config": name, "plan_bytes": os.path.getsize(stem + ".gplan"),
               "accuracy": float((y.argmax(1) == labels).mean())}
        if name != "f32":
            noise = ((y - f32) ** 2).sum()
            row["top1_agreement"] = float((y.argmax(1) == f32.argmax(1)).mean())
            row["sqnr_db"] = (float(10 * np.log10((f32 ** 2).sum() / noise))
                              if noise > 0 else None)
            row["max_abs_err"] = float(np.abs(y - f32).max())
        rows.append(row)
        log(f"  accuracy {100 * row['accuracy']:.2f}%")

    f32_classes = len(set(logits["f32"].argmax(1)))
    result = {"kind": "gopt-precision-trained",
              "started": started.isoformat(timespec="seconds"),
              "command": " ".join(["benchmarks/precision/trained.py"] + sys.argv[1:]),
              "model": "mnist_cnn.onnx trained by gopt on Fashion-MNIST",
              "epochs": a.epochs, "parameters_replaced": replaced,
              "training_summary": [l for l in train_log.splitlines() if "accuracy" in l or "step time" in l],
              "calibration_images": a.calibration_images, "calibration": calibration,
              "test_images": int(labels.shape[0]), "f32_distinct_classes": f32_classes,
              "machine": machine(), "rows": rows, "json": out}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"precision-trained: wrote {os.path.relpath(out, ROOT)}")
    write_readme(result, a.no_readme)
    return 0


def machine():
    name, flags = "unknown", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and name == "unknown":
                    name = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1].split()
    except OSError:
        pass
    keep = [x for x in flags if x in ("avx512_bf16", "avx512_vnni", "avx_vnni",
                                      "amx_bf16", "amx_int8")]
    return {"cpu": name, "flags": keep, "cpus": os.cpu_count()}


def table(result):
    lines = [
        f"mnist_cnn trained by gopt on Fashion-MNIST ({result['epochs']} epochs, Adam), "
        f"classifying the {result['test_images']:,} test images; static int8 calibrated on "
        f"the first {result['calibration_images']} training images. "
        f"{result['machine']['cpu']} ({', '.join(result['machine']['flags']) or 'no bf16/VNNI/AMX'}), "
        f"{result['started'][:10]}.",
        "",
        "| precision | test accuracy | vs. f32 | top-1 agreement with f32 | SQNR vs. f32 | plan size |",
        "|---|--:|--:|--:|--:|--:|"]
    base = result["rows"][0]["accuracy"]
    for r in result["rows"]:
        delta = "" if r["config"] == "f32" else f"{100 * (r['accuracy'] - base):+.2f} pt"
        agree = "" if r["config"] == "f32" else f"{100 * r['top1_agreement']:.2f}%"
        sqnr = ("" if r["config"] == "f32" else
                "exact" if r.get("sqnr_db") is None else f"{r['sqnr_db']:.1f} dB")
        lines.append(f"| {r['config']} | {100 * r['accuracy']:.2f}% | {delta} | {agree} | "
                     f"{sqnr} | {r['plan_bytes'] / 2**20:.2f} MiB |")
    lines += ["", f"Produced by `{result['command']}`; raw data: "
              f"`{os.path.relpath(result['json'], ROOT) if os.path.isabs(result['json']) else result['json']}`."]
    return "\n".join(lines)


def write_readme(result, no_readme):
    text = table(result)
    print(text)
    if no_readme:
        return
    readme = os.path.join(ROOT, "README.md")
    with open(readme) as f:
        content = f.read()
    if BEGIN not in content or END not in content:
        print(f"precision-trained: README.md has no {BEGIN} ... {END} section",
              file=sys.stderr)
        return
    head, rest = content.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + text + "\n" + END + tail)


if __name__ == "__main__":
    sys.exit(main())
