#!/usr/bin/env python3
"""Static int8 against f16 and f32 on gopt's CUDA backend, in one run.

Runs on the GPU machine from a bundle made by scripts/bundle-device.sh with
an int8 model, e.g. GOPT_DEVICE_MODELS="$MODELS/resnet18.onnx:f32,f16,int8"
(models/NAME.{f32,f16,int8}.gplan; the int8 plan is --gopt-quantize's,
calibrated when the bundle is made). No PyTorch needed:

  source BUNDLE/env.sh
  python3 benchmarks/gpu/int8.py --bundle BUNDLE --out DIR [--batches 1,32]

For every model and batch it times gopt-run --backend cuda, interleaved
over --rounds rounds (the median of the rounds' medians), on:
- the int8 plan (conv2d/matmul chains on cuDNN/cuBLASLt int8, QuantizedOps.cpp);
- the same plan with GOPT_CUDA_INT8=0 (every quantize, dequantize and f32
  conv/matmul op by op: what the backend did before the int8 kernels);
- the f16 and f32 plans, where the bundle has them.
Writes DIR/int8.json and DIR/int8.md (samples/s and int8 / other ratios).
"""
import argparse
import json
import os
import statistics

from gopt_timer import time_gopt




def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    models_dir = os.path.join(a.bundle, "models")
    names = a.models.split(",") if a.models else sorted(
        {f.split(".")[0] for f in os.listdir(models_dir)
         if f.endswith(".int8.gplan")})
    # (label, plan precision, extra environment)
    variants = [("int8", "int8", {}),
                ("int8 op by op", "int8", {"GOPT_CUDA_INT8": "0"}),
                ("f16", "f16", {}),
                ("f32", "f32", {})]
    rows = []
    for name in names:
        for batch in [int(b) for b in a.batches.split(",")]:
            runs = {}
            for _ in range(a.rounds):  # interleaved: drift hits all alike
                for label, precision, env in variants:
                    plan = os.path.join(models_dir, f"{name}.{precision}.gplan")
                    if not os.path.exists(plan):
                        continue
                    r = time_gopt(a.bundle, plan, batch, a.warmup,
                                  a.iterations, a.out, env)
                    runs.setdefault(label, []).append(r)
            row = {"model": name, "batch": batch, "results": {}}
            for label, results in runs.items():
                ok = [r["throughput_per_s"] for r in results if "throughput_per_s" in r]
                row["results"][label] = (
                    {"throughput_per_s": statistics.median(ok), "rounds": len(ok)}
                    if ok else {"error": results[0].get("error", "failed")})
            int8 = row["results"].get("int8", {}).get("throughput_per_s")
            for label, r in row["results"].items():
                if int8 and label != "int8" and "throughput_per_s" in r:
                    row[f"int8_over_{label.replace(' ', '_')}"] = (
                        int8 / r["throughput_per_s"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(os.path.join(a.out, "int8.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    labels = [v[0] for v in variants]
    with open(os.path.join(a.out, "int8.md"), "w") as f:
        f.write(f"gopt CUDA backend, samples/s (median of {a.rounds} rounds of "
                f"{a.iterations} steps); ratio = int8 / other\n\n")
        f.write("| model | batch | " + " | ".join(labels) +
                " | int8/f16 | int8/f32 |\n")
        f.write("|---|---|" + "---|" * (len(labels) + 2) + "\n")
        for r in rows:
            cells = []
            for label in labels:
                res = r["results"].get(label)
                cells.append("-" if res is None else
                             f"{res['throughput_per_s']:.0f}"
                             if "throughput_per_s" in res else "error")
            ratios = [f"{r[k]:.2f}x" if k in r else "-"
                      for k in ("int8_over_f16", "int8_over_f32")]
            f.write(f"| {r['model']} | {r['batch']} | " + " | ".join(cells) +
                    " | " + " | ".join(ratios) + " |\n")


if __name__ == "__main__":
    main()
