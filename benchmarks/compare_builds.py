#!/usr/bin/python3
"""Two gopt builds side by side, in one run: did a change make gopt slower?

  benchmarks/compare_builds.py --baseline-build DIR [--build-dir build]
      [--models mnist_cnn,resnet18,resnet18_bn,mobilenet_v2] [--batches 1,32]
      [--threads 2] [--repeats 3] [--scale 1.0] [--no-training]
      [--no-compile-time] [--callgrind] [--out benchmarks/results/builds-DATE.json]

For a refactoring that should change no kernel, the question is whether the
new build runs the same graphs as fast as the old one. Each measurement runs
on both builds in turn (base, new, base, new, ...) so machine drift hits
both alike; the report is the ratio new / baseline (> 1: the new build is
faster; for compile time, < 1 is faster).

  inference   gopt-run MODEL.onnx --pipeline 'builtin.module(gopt-optimize{...})'
              at f32 for every model and batch; bf16 and weight-only int8
              (gopt-quantize-weights) at the largest batch for the models
              with batch norms folded in. OMP_WAIT_POLICY is set to passive
              for both, so a build that predates the per-run wait choice is
              timed under the same policy.
  training    gopt-run mnist_cnn.onnx --train --data fake at batch 64 (f32
              and bf16), resnet18.onnx at batch 16: median step time.
  compile     gopt-opt resnet50.onnx --gopt-optimize=target=cpu (ResNet-50
              exported at run time from Debian's torchvision, random
              weights): wall seconds.

With --callgrind the same measurements count instructions under valgrind
(one thread, oneDNN capped at AVX2, which valgrind decodes) instead of
timing them: per inference iteration and per training step (the difference
of two runs of different lengths, so compiling and set-up cancel), and for
the whole compile. Counts repeat to about 0.01% whatever else the machine
runs, which times on a shared machine do not; they miss what instruction
counts cannot see (memory stalls, threads).

Models come from ../shared/models (the founders' reference models); without
them the script says so and exits. A benchmark, not a test.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run_cpu  # noqa: E402  (machine_info, loadavg, ITERATIONS)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, env=None, timeout=1800):
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def pipeline(precision):
    opt = "gopt-optimize{target=cpu%s}" % (
        "" if precision in ("f32", "int8-weights") else " precision=" + precision)
    if precision == "int8-weights":
        return "builtin.module(%s,func.func(gopt-quantize-weights))" % opt
    return "builtin.module(%s)" % opt


class Build:
    def __init__(self, name, build_dir):
        self.name = name
        self.dir = build_dir
        self.gopt_run = os.path.join(build_dir, "bin", "gopt-run")
        self.gopt_opt = os.path.join(build_dir, "bin", "gopt-opt")
        for tool in (self.gopt_run, self.gopt_opt):
            if not os.access(tool, os.X_OK):
                sys.exit(f"compare_builds: {tool} is missing; build {build_dir} first")

    def infer(self, a, env, model_path, batch, precision, warmup, iters):
        out = os.path.join(a.work, f"{self.name}.json")
        cmd = [self.gopt_run, model_path, "--threads", str(a.threads),
               "--batch", str(batch), "--warmup", str(warmup),
               "--iterations", str(iters), "--json", out,
               "--pipeline", pipeline(precision)]
        r = sh(cmd, env=env)
        if r.returncode != 0:
            raise RuntimeError((r.stderr or r.stdout).strip()[-300:])
        with open(out) as f:
            return json.load(f)["throughput_per_s"]

    def train(self, a, env, model_path, batch, steps, precision):
        r = sh([self.gopt_run, model_path, "--train", "--data", "fake",
                "--batch", str(batch), "--steps", str(steps),
                "--threads", str(a.threads), "--log-every", "1000000",
                "--precision", precision], env=env)
        if r.returncode != 0:
            raise RuntimeError((r.stderr or r.stdout).strip()[-300:])
        m = re.search(r"step time \(median after \d+ warm-up steps\): "
                      r"([0-9.]+) ms", r.stdout)
        return batch / (float(m.group(1)) / 1e3)

    def instructions(self, env, cmd):
        r = sh(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.devnull]
               + cmd, env=env, timeout=3600)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if r.returncode != 0 or not m:
            raise RuntimeError((r.stderr or r.stdout).strip()[-300:])
        return int(m.group(1))

    def infer_instructions(self, a, env, model_path, batch, short, long):
        """Instructions per inference iteration: two runs' difference."""
        def run(iters):
            return self.instructions(env, [
                self.gopt_run, model_path, "--threads", "1", "--batch",
                str(batch), "--warmup", "1", "--iterations", str(iters),
                "--pipeline", pipeline("f32")])
        return (run(long) - run(short)) / (long - short) / 1e6

    def train_instructions(self, a, env, model_path, batch, short, long):
        def run(steps):
            return self.instructions(env, [
                self.gopt_run, model_path, "--train", "--data", "fake",
                "--batch", str(batch), "--steps", str(steps), "--threads", "1",
                "--loader-threads", "1", "--log-every", "1000000"])
        return (run(long) - run(short)) / (long - short) / 1e6

    def compile_instructions(self, env, model_path):
        return self.instructions(env, [
            self.gopt_opt, model_path, "--gopt-optimize=target=cpu",
            "-o", os.devnull]) / 1e6

    def compile_seconds(self, env, model_path):
        start = time.perf_counter()
        r = sh([self.gopt_opt, model_path, "--gopt-optimize=target=cpu",
                "-o", os.devnull], env=env)
        if r.returncode != 0:
            raise RuntimeError((r.stderr or r.stdout).strip()[-300:])
        return time.perf_counter() - start


def export_resnet50(path):
    if os.path.exists(path):
        return
    code = (
        "import torch, torchvision, sys\n"
        "torch.manual_seed(0)\n"
        "m = torchvision.models.resnet50().eval()\n"
        "torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[1],\n"
        "  input_names=['input'], output_names=['output'], opset_version=13,\n"
        "  dynamic_axes={'input': {0: 'batch'}, 'output': {0: 'batch'}})\n")
    r = sh(["/usr/bin/python3", "-c", code, path])
    if r.returncode != 0:
        raise RuntimeError("exporting ResNet-50: " + r.stderr.strip()[-300:])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baseline-build", required=True)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    p.add_argument("--models", default="mnist_cnn,resnet18,resnet18_bn,mobilenet_v2")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--no-training", action="store_true")
    p.add_argument("--no-compile-time", action="store_true")
    p.add_argument("--baseline-label", default="",
                   help="what the baseline is (default: its checkout's commit)")
    p.add_argument("--new-label", default="")
    p.add_argument("--callgrind", action="store_true",
                   help="count instructions under valgrind instead of timing")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if not os.path.isdir(a.models_dir):
        print(f"compare_builds: no reference models in {a.models_dir}; nothing to do")
        return 0
    a.work = os.path.join(HERE, "work")
    os.makedirs(a.work, exist_ok=True)
    builds = [Build("baseline", a.baseline_build), Build("new", a.build_dir)]
    env = dict(os.environ, OMP_WAIT_POLICY="passive",
               OMP_NUM_THREADS=str(a.threads))
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"started": started.isoformat(timespec="seconds"),
              "machine": run_cpu.machine_info(),
              "builds": {b.name: {"dir": os.path.abspath(b.dir),
                                  "commit": label or sh(
                                      ["git", "-C", b.dir, "rev-parse",
                                       "--short", "HEAD"]).stdout.strip()}
                         for b, label in zip(builds, (a.baseline_label,
                                                      a.new_label))},
              "loadavg_start": run_cpu.loadavg(), "rows": []}

    def measure(kind, label, fn, lower_is_better=False):
        samples = {b.name: [] for b in builds}
        # Instruction counts repeat: one sample each.
        for rep in range(1 if a.callgrind else a.repeats):
            for b in builds:
                try:
                    samples[b.name].append(fn(b))
                except RuntimeError as e:
                    log(f"  {label} {b.name}: FAILED: {e}")
                    return
        med = {k: statistics.median(v) for k, v in samples.items()}
        ratio = med["new"] / med["baseline"]
        result["rows"].append({"kind": kind, "label": label, "samples": samples,
                               "median": med, "ratio": ratio,
                               "lower_is_better": lower_is_better})
        log(f"  {kind} {label}: baseline {med['baseline']:.4g}, new "
            f"{med['new']:.4g}, new/baseline {ratio:.3f}")

    result["callgrind"] = a.callgrind
    models = a.models.split(",")
    batches = [int(b) for b in a.batches.split(",")]
    if a.callgrind:
        run_callgrind(a, builds, models, measure)
        models = []
    for model in models:
        path = os.path.join(a.models_dir, model + ".onnx")
        precisions = ["f32"]
        for batch in batches:
            warmup, iters = run_cpu.ITERATIONS.get((model, batch), (5, 20))
            iters = max(3, int(round(iters * a.scale)))
            warmup = max(1, int(round(warmup * a.scale)))
            if batch == max(batches) and model in ("resnet18_bn", "mobilenet_v2"):
                precisions = ["f32", "bf16", "int8-weights"]
            for precision in precisions:
                measure("inference", f"{model} b{batch} {precision}",
                        lambda b: b.infer(a, env, path, batch, precision,
                                          warmup, iters))
    if not a.no_training and not a.callgrind:
        mnist = os.path.join(a.models_dir, "mnist_cnn.onnx")
        resnet = os.path.join(a.models_dir, "resnet18.onnx")
        for precision in ("f32", "bf16"):
            measure("training", f"mnist_cnn b64 {precision}",
                    lambda b: b.train(a, env, mnist, 64, 30, precision))
        measure("training", "resnet18 b16 f32",
                lambda b: b.train(a, env, resnet, 16, 6, "f32"))
    if not a.no_compile_time and not a.callgrind:
        r50 = os.path.join(a.work, "resnet50.onnx")
        export_resnet50(r50)
        measure("compile", "resnet50 gopt-optimize (s)",
                lambda b: b.compile_seconds(env, r50))

    result["loadavg_end"] = run_cpu.loadavg()
    out = a.out or os.path.join(HERE, "results",
                                f"builds-{started.strftime('%Y-%m-%d-%H%M')}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    md = os.path.splitext(out)[0] + ".md"
    with open(md, "w") as f:
        f.write(report(result))
    log(f"compare_builds: wrote {out} and {md}")
    return 0


# (short, long) iteration counts under valgrind: the difference is timed
# work, enough to dwarf the counts' jitter, on runs of a minute or two.
CALLGRIND_ITERATIONS = {"mnist_cnn": (2, 6), "mobilenet_v2": (1, 3)}


def run_callgrind(a, builds, models, measure):
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS="1",
               ONEDNN_MAX_CPU_ISA="AVX2")
    for model in models:
        path = os.path.join(a.models_dir, model + ".onnx")
        short, long = CALLGRIND_ITERATIONS.get(model, (1, 2))
        measure("instructions", f"{model} b1 f32, per iteration (M)",
                lambda b: b.infer_instructions(a, env, path, 1, short, long),
                lower_is_better=True)
    if not a.no_training:
        mnist = os.path.join(a.models_dir, "mnist_cnn.onnx")
        measure("instructions", "mnist_cnn b8 training, per step (M)",
                lambda b: b.train_instructions(a, env, mnist, 8, 2, 3),
                lower_is_better=True)
    if not a.no_compile_time:
        r50 = os.path.join(a.work, "resnet50.onnx")
        export_resnet50(r50)
        measure("instructions", "resnet50 gopt-optimize, whole compile (M)",
                lambda b: b.compile_instructions(env, r50),
                lower_is_better=True)


def report(result):
    b = result["builds"]
    m = result["machine"]
    lines = [f"Baseline {b['baseline']['commit']}, new {b['new']['commit']}; "
             f"{m.get('cpu_model', '?')}, {m.get('cpus', '?')} CPUs; load "
             f"average {result['loadavg_start'][0]} at the start, "
             f"{result['loadavg_end'][0]} at the end. Medians of interleaved "
             "runs; inference and training in samples/s (new/baseline > 1: "
             "faster), compile time in seconds and instruction counts in "
             "millions (< 1: faster)." + (
                 " Instructions counted by valgrind's callgrind, one thread, "
                 "oneDNN capped at AVX2." if result.get("callgrind") else ""),
             "",
             "| measurement | baseline | new | new / baseline |",
             "|---|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['kind']}: {row['label']} | "
                     f"{row['median']['baseline']:.4g} | {row['median']['new']:.4g} | "
                     f"{row['ratio']:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
