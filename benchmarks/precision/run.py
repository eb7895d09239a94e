#!/usr/bin/python3
"""Precision on the CPU: gopt f32 vs. bf16 vs. weight-only int8, beside ONNX
Runtime's f32, in one run: throughput ratios, plan sizes and accuracy.

  benchmarks/precision/run.py [--build-dir build] [--models resnet18_bn,...]
                              [--batch 32] [--threads 2] [--repeats 3]
                              [--agreement-batch 256] [--no-readme]
                              [--out benchmarks/results/precision-DATE.json]
  benchmarks/precision/run.py --from-json RESULTS.json   (README and plot only)
  benchmarks/precision/run.py --baseline-build DIR --no-readme ...
                              (before/after: DIR's plans timed beside)

Every configuration is compiled once to a plan (gopt-opt with the pipeline
below, then gopt-translate --emit-plan), so the timed runs load the plan
file and nothing else:

  f32          gopt-optimize{target=cpu}
  bf16         gopt-optimize{target=cpu precision=bf16}  (mixed precision)
  weight-int8  gopt-optimize{target=cpu}, then gopt-quantize-weights
  static-int8  gopt-optimize{target=cpu}, then gopt-quantize with ranges
               from gopt-run --calibrate (minmax) on the model's reference
               images (NAME.input.npy, so the error against PyTorch on them
               is in-sample), else on --calibration-batches batches of
               gopt-run's random inputs (percentile)
  ort-f32      ONNX Runtime (npm's onnxruntime-node, graph optimization
               'all') on the same .onnx, ../shared/peers/ort_bench.js
  ort-int8     ONNX Runtime on gopt's static-int8 graph exported as an ONNX
               Q/DQ model (gopt-translate --export-onnx)

Timing is interleaved (f32 bf16 int8 ort, f32 bf16 ...) so machine drift hits
all alike; the median throughput over --repeats is kept. Accuracy, per
configuration: max abs error against PyTorch's stored f32 outputs
(NAME.output.npy, batch 2), and SQNR, top-1 agreement and top-5 overlap
against gopt's f32 plan over --agreement-batch fixed random inputs (shown
as "one class" where the random-weight f32 model picks the same class for
every input; benchmarks/precision/trained.py measures accuracy on real
data with a trained model). Plan size is the .gplan file's.

With --baseline-build, every gopt configuration is also compiled and timed
with the build in DIR (its gopt-opt, gopt-translate and gopt-run; the same
calibration ranges), interleaved with the others, as "base:NAME": a change's
before and after against the same ONNX Runtime runs. Their accuracy is not
measured.

Writes the JSON, the README's precision table (between the precision
markers) and docs/precision.png unless --no-readme. A benchmark, not a test.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import run_cpu  # noqa: E402  (Bench, sh, machine_info, versions, loadavg)

BEGIN, END = "<!-- precision:begin -->", "<!-- precision:end -->"
OPTIMIZE = "builtin.module(gopt-optimize{target=cpu})"
CONFIGS = [
    ("f32", OPTIMIZE),
    ("bf16", "builtin.module(gopt-optimize{target=cpu precision=bf16})"),
    ("weight-int8",
     "builtin.module(gopt-optimize{target=cpu},func.func(gopt-quantize-weights))"),
    # {ranges} is the calibration file of the model.
    ("static-int8",
     "builtin.module(gopt-optimize{target=cpu},func.func(gopt-quantize{calibration={ranges}}))"),
]
# (warmup, iterations) at batch 32: ~1-3 s of timed work per run.
ITERATIONS = {"mnist_cnn": (5, 60), "resnet18_bn": (2, 8), "resnet18": (2, 8),
              "mobilenet_v2": (2, 10)}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def calibrate(bench, model, batch, batches):
    """Ranges of the optimized graph's activations: work/MODEL.ranges.json,
    and what they were calibrated on."""
    ranges = os.path.join(bench.work, f"{model}.ranges.json")
    cmd = [bench.gopt_run, bench.model_path(model), "--pipeline", OPTIMIZE,
           "--calibrate", "--calibration-out", ranges]
    images = os.path.join(bench.a.models_dir, model + ".input.npy")
    if os.path.exists(images):
        # Random inputs are far from real images (ResNet's normalized inputs
        # reach |4.6|): ranges from them clip real data.
        cmd += ["--input", "input=" + images, "--batch", "2"]
        source = f"{model}.input.npy (2 images, minmax)"
    else:
        cmd += ["--calibration-method", "percentile", "--batch", str(batch),
                "--calibration-batches", str(batches)]
        source = f"{batches} batches of {batch} random inputs (percentile)"
    r = run_cpu.sh(cmd, env=bench.env)
    if r.returncode != 0:
        raise RuntimeError(f"gopt-run --calibrate {model}: {r.stderr.strip()[-400:]}")
    return ranges, source


def compile_plan(bench, model, name, pipeline, ranges, build_dir=None):
    """MODEL.onnx -> work/MODEL-NAME.gplan (and .mlir) with the build in
    `build_dir` (default: the benchmarked one); returns the plan."""
    build_dir = build_dir or bench.a.build_dir
    tag = name.replace(":", "-")
    mlir = os.path.join(bench.work, f"{model}-{tag}.mlir")
    plan = os.path.join(bench.work, f"{model}-{tag}.gplan")
    r = run_cpu.sh([os.path.join(build_dir, "bin", "gopt-opt"), bench.model_path(model),
                    "--pass-pipeline=" + pipeline.replace("{ranges}", ranges),
                    "-o", mlir])
    if r.returncode != 0:
        raise RuntimeError(f"gopt-opt {model} {name}: {r.stderr.strip()[-400:]}")
    translate = os.path.join(build_dir, "bin", "gopt-translate")
    r = run_cpu.sh([translate, "--emit-plan", mlir, "-o", plan])
    if r.returncode != 0:
        raise RuntimeError(f"gopt-translate {model} {name}: {r.stderr.strip()[-400:]}")
    return plan


def accuracy(bench, model, plan, f32_plan, agreement_batch):
    """Error against PyTorch's outputs and agreement with the f32 plan."""
    acc = {}
    base = os.path.join(bench.a.models_dir, model)
    if os.path.exists(base + ".input.npy") and os.path.exists(base + ".output.npy"):
        r = run_cpu.sh([bench.gopt_run, plan, "--batch", "2", "--warmup", "0",
                        "--iterations", "1", "--input", "input=" + base + ".input.npy",
                        "--compare-npy", "output=" + base + ".output.npy",
                        "--atol", "1e9", "--rtol", "0"], env=bench.env)
        m = re.search(r"max_abs_err (\S+)", r.stdout)
        if m:
            acc["max_abs_err_vs_torch"] = float(m.group(1))
    if plan != f32_plan:
        r = run_cpu.sh([bench.gopt_run, plan, "--compare", f32_plan,
                        "--compare-backend", "cpu", "--batch", str(agreement_batch),
                        "--atol", "1e9", "--rtol", "0"], env=bench.env)
        m = re.search(r"top-1 agreement (\d+)/(\d+) \S+, top-5 overlap (\S+)%", r.stdout)
        if m:
            acc["top1_agreement"] = int(m.group(1)) / int(m.group(2))
            acc["top5_overlap"] = float(m.group(3)) / 100
            acc["agreement_inputs"] = int(m.group(2))
            sqnr = re.search(r"SQNR (\S+) dB", r.stdout)
            if sqnr and sqnr.group(1) != "inf":
                acc["sqnr_db"] = float(sqnr.group(1))
            # The random-weight models give (nearly) every input the same
            # top-1 class: agreement is then trivially 100%.
            acc["reference_one_class"] = "the reference's top-1 is class" in r.stdout
        else:
            acc["error"] = (r.stderr.strip() or r.stdout.strip())[-300:]
    return acc


def run_plan(bench, plan, batch, warmup, iters, gopt_run=None):
    out = plan + ".timing.json"
    if os.path.exists(out):
        os.remove(out)
    r = run_cpu.sh([gopt_run or bench.gopt_run, plan, "--threads", str(bench.a.threads),
                    "--batch", str(batch), "--warmup", str(warmup),
                    "--iterations", str(iters), "--json", out],
                   env=bench.env, timeout=bench.a.timeout)
    if r.returncode != 0:
        return None, (r.stderr.strip() or r.stdout.strip())[-400:]
    with open(out) as f:
        return json.load(f), None


def run_ort_file(bench, onnx_path, batch, warmup, iters):
    """ONNX Runtime on a file outside the models directory."""
    cmd = ["node", os.path.join(bench.a.peers_scripts, "ort_bench.js"), onnx_path,
           "--batch", str(batch), "--threads", str(bench.a.threads), "--warmup",
           str(warmup), "--iterations", str(iters), "--opt", "all"]
    r = run_cpu.sh(cmd, env=bench.env, timeout=bench.a.timeout)
    if r.returncode != 0:
        return None, r.stderr.strip()[-400:]
    return run_cpu.last_json_line(r.stdout), None


def fmt_ratio(v):
    return f"{v:.2f}x" if v else "n/a"


def readme_block(result):
    m = result["machine"]
    avx512 = m.get("avx512_flags", [])
    isa = ", ".join([f for f in ("avx512_bf16", "avx512_vnni") if f in avx512]
                    + (["AMX"] if m.get("amx_flags") else ["no AMX"]))
    lines = [
        BEGIN,
        f"Batch {result['batch']}, {result['threads']} threads, "
        f"{m.get('cpu_model')} ({isa}), {result['started'][:10]}. "
        "Throughput relative to ONNX Runtime's f32 on the same model in the same run "
        "(> 1: gopt faster); size of the plan file; accuracy against PyTorch's f32 "
        f"outputs, and top-1 agreement and SQNR against gopt's f32 plan over "
        f"{result['agreement_batch']} fixed random inputs. These models have random "
        "weights: where f32 picks one class for every input, agreement is trivially "
        "100% and shown as \"one class\"; the SQNR and the trained-model table below "
        "are the figures that count.",
        "",
        "| model | precision | / ORT f32 | / gopt f32 | plan size | max abs err vs. PyTorch | SQNR vs. f32 | top-1 agreement | top-5 overlap |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["summary"]:
        for name, _ in CONFIGS:
            c = row["configs"].get(name)
            if not c:
                continue
            acc = c.get("accuracy", {})
            agree = acc.get("top1_agreement")
            sqnr = acc.get("sqnr_db")
            sqnr_cell = "" if name == "f32" else f"{sqnr:.1f} dB" if sqnr is not None else "n/a"
            if name == "f32":
                agree_cell, overlap_cell = "(reference)", ""
            elif agree is None:
                agree_cell = overlap_cell = "n/a"
            elif acc.get("reference_one_class"):
                agree_cell = overlap_cell = "one class"
            else:
                agree_cell = f"{agree:.1%}"
                overlap_cell = f"{acc.get('top5_overlap', 0):.1%}"
            err = acc.get("max_abs_err_vs_torch")
            err_cell = f"{err:.3g}" if err is not None else "n/a"
            lines.append(
                f"| {row['model']} | {name} | {fmt_ratio(c.get('vs_ort'))} | "
                f"{fmt_ratio(c.get('vs_f32'))} | {c['plan_bytes'] / 2**20:.1f} MiB | "
                f"{err_cell} | {sqnr_cell} | {agree_cell} | {overlap_cell} |")
    lines += ["", "static-int8 ranges calibrated on: " + "; ".join(
        f"{row['model']} {row['calibrated_on']}" for row in result["summary"]) + "."]
    lines += ["", "ONNX Runtime on gopt's static-int8 model exported as ONNX Q/DQ, "
              "relative to ONNX Runtime's f32: " + ", ".join(
                  f"{row['model']} {fmt_ratio(row.get('ort_int8_vs_ort_f32'))}"
                  for row in result["summary"]) + "."]
    lines += ["", f"Produced by `{result['command']}`; every sample in "
              f"`{os.path.relpath(result['json'], ROOT)}`.", "",
              "![gopt precision benchmark](docs/precision.png)", END]
    return "\n".join(lines)


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = result["summary"]
    names = [n for n, _ in CONFIGS]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        ys = [r["configs"].get(name, {}).get("vs_ort") or 0 for r in rows]
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, ys, width, label=f"gopt {name}")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="ONNX Runtime f32")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["model"] for r in rows])
    ax.set_ylabel("throughput / ONNX Runtime f32")
    ax.set_title(f"CPU, batch {result['batch']}, {result['threads']} threads")
    top = max([r["configs"].get(n, {}).get("vs_ort") or 0 for r in rows for n in names] + [1])
    ax.set_ylim(0, top * 1.3)  # room for the legend above the bars
    ax.legend(fontsize=8, ncol=3, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    p.add_argument("--peers-scripts", default=os.path.join(ROOT, "..", "shared", "peers"))
    p.add_argument("--peers-dir", default=os.path.join(BENCH, ".peers"))
    p.add_argument("--models", default="resnet18_bn,mobilenet_v2,mnist_cnn")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--agreement-batch", type=int, default=256)
    p.add_argument("--calibration-batches", type=int, default=4)
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--out", default=None)
    p.add_argument("--no-readme", action="store_true")
    p.add_argument("--baseline-build", help="also time every gopt configuration "
                   "compiled and run by the build in this directory (before/after)")
    p.add_argument("--from-json", help="only rewrite the README table and the plot "
                   "from a results file of an earlier run")
    a = p.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            result = json.load(f)
        write_report(result, a.no_readme)
        return 0
    if not os.path.isabs(a.build_dir):
        a.build_dir = os.path.join(ROOT, a.build_dir)
    if not os.path.isdir(a.models_dir):
        log(f"precision: no models directory {a.models_dir}: nothing to benchmark")
        return 0
    bench = run_cpu.Bench(a)
    if not os.path.isdir(bench.env["ORT_NODE_MODULE"]):
        log(f"precision: no onnxruntime-node in {a.peers_dir}: run scripts/install-peers.sh")
        return 1
    models = [m for m in a.models.split(",") if os.path.exists(bench.model_path(m))]

    started = datetime.datetime.now(datetime.timezone.utc)
    out = a.out or os.path.join(
        BENCH, "results", f"precision-{started.strftime('%Y-%m-%d-%H%M')}.json")
    result = {"kind": "gopt-precision-benchmark",
              "started": started.isoformat(timespec="seconds"),
              "command": " ".join(["benchmarks/precision/run.py"] + sys.argv[1:]),
              "batch": a.batch, "threads": a.threads, "repeats": a.repeats,
              "agreement_batch": a.agreement_batch,
              "machine": run_cpu.machine_info(), "versions": run_cpu.versions(bench),
              "configs": dict(CONFIGS), "loadavg_start": run_cpu.loadavg(),
              "baseline_build": a.baseline_build,
              "runs": [], "summary": [], "json": out}

    for model in models:
        ranges, row_source = calibrate(bench, model, a.batch, a.calibration_batches)
        plans = {name: compile_plan(bench, model, name, pipe, ranges)
                 for name, pipe in CONFIGS}
        base_plans = {}
        if a.baseline_build:
            base_plans = {"base:" + name: compile_plan(bench, model, "base:" + name, pipe,
                                                       ranges, a.baseline_build)
                          for name, pipe in CONFIGS}
        # gopt's static-int8 graph as an ONNX Q/DQ model, for ONNX Runtime.
        qdq_onnx = os.path.join(bench.work, f"{model}-static-int8.onnx")
        r = run_cpu.sh([os.path.join(a.build_dir, "bin", "gopt-translate"), "--export-onnx",
                        plans["static-int8"][:-len(".gplan")] + ".mlir", "-o", qdq_onnx])
        if r.returncode != 0:
            raise RuntimeError(f"export {model} Q/DQ: {r.stderr.strip()[-400:]}")
        row = {"model": model, "configs": {}, "calibrated_on": row_source}
        for name, plan in plans.items():
            log(f"precision: {model} {name}: accuracy")
            row["configs"][name] = {
                "plan_bytes": os.path.getsize(plan),
                "accuracy": accuracy(bench, model, plan, plans["f32"], a.agreement_batch)}
        warmup, iters = ITERATIONS.get(model, (2, 8))
        samples = {name: [] for name in list(plans) + list(base_plans)
                   + ["ort-f32", "ort-int8"]}
        for rep in range(a.repeats):
            for name in samples:
                if name == "ort-f32":
                    r, err = bench.run_ort(model, a.batch, warmup, iters)
                elif name == "ort-int8":
                    r, err = run_ort_file(bench, qdq_onnx, a.batch, warmup, iters)
                elif name in base_plans:
                    r, err = run_plan(bench, base_plans[name], a.batch, warmup, iters,
                                      os.path.join(a.baseline_build, "bin", "gopt-run"))
                else:
                    r, err = run_plan(bench, plans[name], a.batch, warmup, iters)
                run = {"model": model, "config": name, "repeat": rep,
                       "loadavg": run_cpu.loadavg()}
                if err:
                    run["error"] = err
                    log(f"  {model} {name} #{rep}: failed: {err}")
                else:
                    run["throughput_per_s"] = r["throughput_per_s"]
                    run["median_ms"] = r["median_ms"]
                    samples[name].append(r["throughput_per_s"])
                    log(f"  {model} {name} #{rep}: {r['throughput_per_s']:.1f}/s")
                result["runs"].append(run)
        tp = {n: statistics.median(s) for n, s in samples.items() if s}
        row["throughput_per_s"] = tp
        row["ort_int8_vs_ort_f32"] = (tp["ort-int8"] / tp["ort-f32"]
                                      if "ort-int8" in tp and "ort-f32" in tp else None)
        for name in plans:
            if name in tp:
                c = row["configs"][name]
                c["vs_ort"] = tp[name] / tp["ort-f32"] if "ort-f32" in tp else None
                c["vs_f32"] = tp[name] / tp["f32"] if "f32" in tp else None
        for name in base_plans:
            if name in tp:
                row["configs"][name] = {
                    "plan_bytes": os.path.getsize(base_plans[name]),
                    "vs_ort": tp[name] / tp["ort-f32"] if "ort-f32" in tp else None,
                    "vs_f32": tp[name] / tp["base:f32"] if "base:f32" in tp else None}
        result["summary"].append(row)

    result["loadavg_end"] = run_cpu.loadavg()
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    write_report(result, a.no_readme)
    return 0


def before_after_block(result):
    """Throughput / ONNX Runtime f32, baseline build and this one."""
    lines = ["| model | precision | before / ORT f32 | after / ORT f32 | after / before |",
             "|---|---|---|---|---|"]
    for row in result["summary"]:
        for name, _ in CONFIGS:
            new, old = row["configs"].get(name, {}), row["configs"].get("base:" + name, {})
            if new.get("vs_ort") and old.get("vs_ort"):
                lines.append(f"| {row['model']} | {name} | {old['vs_ort']:.2f}x | "
                             f"{new['vs_ort']:.2f}x | {new['vs_ort'] / old['vs_ort']:.2f}x |")
    return "\n".join(lines)


def write_report(result, no_readme):
    """The Markdown block on stdout; README.md and docs/precision.png."""
    block = readme_block(result)
    print(block)
    if result.get("baseline_build"):
        print()
        print(before_after_block(result))
    if not no_readme:
        readme = os.path.join(ROOT, "README.md")
        with open(readme) as f:
            text = f.read()
        if BEGIN in text:
            text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
        else:
            text += "\n### Precision (CPU)\n\n" + block + "\n"
        with open(readme, "w") as f:
            f.write(text)
        plot(result, os.path.join(ROOT, "docs", "precision.png"))
        log("precision: wrote README.md and docs/precision.png")


if __name__ == "__main__":
    sys.exit(main())
