#!/usr/bin/env python3
"""gopt's CUDA backend against PyTorch on the same GPU, in one run.

Runs on the GPU machine, from a bundle made by scripts/bundle-device.sh with
GOPT_DEVICE_MODELS set (its models/NAME.{f32,f16}.gplan), with the Python
that holds PyTorch and torchvision:

  source BUNDLE/env.sh
  python3 benchmarks/gpu/run.py --bundle BUNDLE --out DIR [--batches 1,32]

For every model and batch it times, interleaved:
- gopt-run --backend cuda on the f32 plan (cuDNN's TF32 convolutions, as
  PyTorch's default) and on the f16 plan (NHWC, mixed precision);
- PyTorch eager, f32 (cudnn.benchmark on, its default TF32 for convolutions)
  and f16 (autocast, channels_last), from a pinned host input to a host
  output as gopt-run's session does (the copies are in both times).
The model is rebuilt with torchvision at the same architecture; weights
differ from the plan's, which does not change the time. Writes DIR/gpu.json
and DIR/gpu.md (ratios: gopt's throughput over PyTorch's). Each
--variant LABEL:VAR=VALUE also times gopt under that environment right
after its default run, and adds the column gopt / gopt (LABEL); e.g.
--variant legacy-conv:GOPT_CUDA_CONV_GRAPH=0 measures cuDNN's graph API
against the legacy algorithms in the same call.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

from gopt_timer import time_gopt


class MnistCNN(nn.Module):
    """The reference models' MNIST CNN (../shared/models/make_models.py)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(),
            nn.Conv2d(32, 64, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
            nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(128, 10))

    def forward(self, x):
        return self.features(x)


def torch_model(name):
    import torchvision
    if name == "mnist_cnn":
        return MnistCNN(), (1, 28, 28)
    if name in ("resnet18", "resnet18_bn"):
        return torchvision.models.resnet18(), (3, 224, 224)
    if name in ("resnet50", "resnet50_bn"):
        return torchvision.models.resnet50(), (3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(), (3, 224, 224)
    raise SystemExit(f"run.py: no PyTorch model for '{name}'")


def time_torch(name, batch, precision, warmup, iterations):
    torch.backends.cudnn.benchmark = True
    model, shape = torch_model(name)
    model = model.eval().cuda()
    # Host in, host out, as gopt-run's session: the input is copied from
    # pinned memory each step and the output back.
    x_host = torch.randn((batch,) + shape).pin_memory()
    channels_last = precision == "f16" and len(shape) == 3
    if channels_last:
        model = model.to(memory_format=torch.channels_last)

    def step():
        x = x_host.cuda(non_blocking=True)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16,
                                             enabled=precision == "f16"):
            y = model(x)
        y.float().cpu()

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    median = times[len(times) // 2]
    return {"median_ms": median, "throughput_per_s": batch * 1e3 / median}




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--variant", action="append", default=[],
                   metavar="LABEL:VAR=VALUE[,VAR=VALUE]",
                   help="also time gopt with these environment variables, "
                        "right after its default run (e.g. "
                        "legacy-conv:GOPT_CUDA_CONV_GRAPH=0); repeatable")
    a = p.parse_args()
    variants = []
    for v in a.variant:
        label, _, assignments = v.partition(":")
        env = dict(kv.split("=", 1) for kv in assignments.split(",") if kv)
        if not label or not env:
            p.error(f"--variant {v!r}: expected LABEL:VAR=VALUE[,VAR=VALUE]")
        variants.append((label, env))
    os.makedirs(a.out, exist_ok=True)
    models_dir = os.path.join(a.bundle, "models")
    names = a.models.split(",") if a.models else sorted(
        {f.split(".")[0] for f in os.listdir(models_dir) if f.endswith(".gplan")})
    rows = []
    for name in names:
        for batch in [int(b) for b in a.batches.split(",")]:
            for precision in ("f32", "f16"):
                plan = os.path.join(models_dir, f"{name}.{precision}.gplan")
                if not os.path.exists(plan):
                    continue
                gopt = time_gopt(a.bundle, plan, batch, a.warmup, a.iterations, a.out)
                others = {label: time_gopt(a.bundle, plan, batch, a.warmup,
                                           a.iterations, a.out, env)
                          for label, env in variants}
                peer = time_torch(name, batch, precision, a.warmup, a.iterations)
                row = {"model": name, "batch": batch, "precision": precision,
                       "gopt": gopt, "torch_eager": peer}
                if others:
                    row["gopt_variants"] = others
                if "throughput_per_s" in gopt:
                    row["ratio"] = gopt["throughput_per_s"] / peer["throughput_per_s"]
                rows.append(row)
                print(json.dumps(row), flush=True)
    device = torch.cuda.get_device_name()
    with open(os.path.join(a.out, "gpu.json"), "w") as f:
        json.dump({"device": device, "torch": torch.__version__, "rows": rows}, f,
                  indent=1)
    with open(os.path.join(a.out, "gpu.md"), "w") as f:
        f.write(f"{device}, PyTorch {torch.__version__} eager; samples/s, median "
                f"of {a.iterations}\n\n")
        labels = [label for label, _ in variants]
        f.write("| model | batch | precision | gopt | PyTorch | gopt / PyTorch |" +
                "".join(f" gopt / gopt ({l}) |" for l in labels) + "\n")
        f.write("|---|---|---|---|---|---|" + "---|" * len(labels) + "\n")
        for r in rows:
            g = r["gopt"]
            gopt = f"{g['throughput_per_s']:.0f}" if "throughput_per_s" in g else "error"
            ratio = f"{r['ratio']:.2f}x" if "ratio" in r else "-"
            cells = ""
            for l in labels:
                o = r.get("gopt_variants", {}).get(l, {})
                cells += (f" {g['throughput_per_s'] / o['throughput_per_s']:.2f}x |"
                          if "throughput_per_s" in g and "throughput_per_s" in o
                          else " - |")
            f.write(f"| {r['model']} | {r['batch']} | {r['precision']} | {gopt} | "
                    f"{r['torch_eager']['throughput_per_s']:.0f} | {ratio} |{cells}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
