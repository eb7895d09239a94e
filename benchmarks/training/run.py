#!/usr/bin/python3
"""Training throughput and accuracy: gopt vs. PyTorch on the CPU, one run.

  benchmarks/training/run.py [--build-dir build] [--threads 2] [--repeats 3]
                             [--steps 20] [--accuracy] [--precisions f32,bf16]
                             [--no-readme] [--baseline OLD/gopt-run]
                             [--cases mnist_cnn:64,mnist_cnn:1024,resnet18:32]
                             [--models-dir ../shared/models]
                             [--out benchmarks/results/training-DATE.json]

Throughput (training steps on constant data, so the graph alone is timed;
median step after warm-up, samples/s), interleaved gopt, torch, gopt, ...:

  mnist_cnn b64, b1024   gopt-run mnist_cnn.onnx --train --data fake
                         vs. benchmarks/training/torch_mnist.py time (the same
                         network without dropout, Adam)
  resnet18 b32           gopt-run resnet18.onnx --train --data fake vs.
                         torchvision's ResNet-18 with its batch norms
                         replaced by identities (resnet18.onnx has them folded)

With --baseline also an older gopt-run binary (e.g. main's build) in the
same interleaved rounds (baseline, gopt, torch, baseline, ...): its
samples/s, gopt's speedup over it, and the load average before each round.

With --accuracy also two epochs of Fashion-MNIST, Adam 1e-3, batch 64, from
the same initial weights, test accuracy per epoch: gopt and PyTorch on the
network without dropout (mnist_cnn.onnx), and on the recipe with its
dropouts (for gopt, torch_mnist.py's training-mode ONNX export).

Writes the JSON and the README's training table (between the training
markers) unless --no-readme. A benchmark, not a test: ratios from one run.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import run_cpu  # noqa: E402  (machine_info, loadavg)

BEGIN, END = "<!-- training:begin -->", "<!-- training:end -->"
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")

TORCH_RESNET = r"""
import json, sys, time, torch, torch.nn as nn, torchvision
torch.set_num_threads(int(sys.argv[3]))
batch, steps = int(sys.argv[1]), int(sys.argv[2])
autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=sys.argv[4] == "bf16")
model = torchvision.models.resnet18(norm_layer=lambda c: nn.Identity())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.full((batch, 3, 224, 224), 0.5)
y = torch.arange(batch) % 1000
times = []
for step in range(2 + steps):
    start = time.perf_counter()
    with autocast:
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step >= 2:
        times.append(time.perf_counter() - start)
m = sorted(times)[len(times) // 2]
print(json.dumps({"batch": batch, "median_step_s": m, "samples_per_s": batch / m}))
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, timeout=1800, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)


def gopt_time(gopt_run, model, batch, steps, threads, precision="f32"):
    r = sh([gopt_run, model, "--train", "--data", "fake", "--batch", str(batch),
            "--steps", str(steps + 3), "--threads", str(threads),
            "--log-every", "1000000", "--precision", precision])
    if r.returncode != 0:
        raise RuntimeError(f"gopt-run failed: {r.stderr.strip()}")
    m = re.search(r"step time \(median after \d+ warm-up steps\): ([0-9.]+) ms",
                  r.stdout)
    return batch / (float(m.group(1)) / 1e3)


def torch_time(model, batch, steps, threads, onnx_path, precision="f32"):
    if model == "mnist_cnn":
        cmd = [sys.executable, os.path.join(HERE, "torch_mnist.py"), "time",
               "--onnx", onnx_path, "--batch", str(batch), "--steps",
               str(steps), "--threads", str(threads)]
        if precision == "bf16":
            cmd.append("--bf16")
    else:
        cmd = [sys.executable, "-c", TORCH_RESNET, str(batch), str(steps),
               str(threads), precision]
    r = sh(cmd)
    if r.returncode != 0:
        raise RuntimeError(f"torch failed: {r.stderr.strip()[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])["samples_per_s"]


def gopt_accuracy(gopt_run, model, threads):
    """Two epochs of gopt-run --train --eval: test accuracy per epoch and
    end-to-end samples/s."""
    r = sh([gopt_run, model, "--train", "--data", "fashion-mnist",
            "--epochs", "2", "--eval", "--threads", str(threads)], timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"gopt-run --train {model} failed: {r.stderr.strip()}")
    acc = [float(a) / 100 for a in
           re.findall(r"test accuracy ([0-9.]+)%", r.stdout)]
    e2e = float(re.search(r"end to end ([0-9.]+) samples/s", r.stdout).group(1))
    return {"accuracy": acc, "samples_per_s": e2e}


def accuracy_runs(gopt_run, onnx_path, threads):
    out = {"gopt": gopt_accuracy(gopt_run, onnx_path, threads)}
    log(f"  gopt: {out['gopt']}")
    # The recipe itself: the network with its dropouts, exported in
    # training mode from the same weights.
    dropout_onnx = os.path.join(ROOT, "build", "mnist_cnn_dropout.onnx")
    r = sh([sys.executable, os.path.join(HERE, "torch_mnist.py"), "export",
            "--onnx", onnx_path, "--out", dropout_onnx])
    if r.returncode != 0:
        raise RuntimeError(f"export failed: {r.stderr.strip()[-500:]}")
    out["gopt-dropout"] = gopt_accuracy(gopt_run, dropout_onnx, threads)
    log(f"  gopt-dropout: {out['gopt-dropout']}")
    for dropout in (False, True):
        cmd = [sys.executable, os.path.join(HERE, "torch_mnist.py"), "train",
               "--onnx", onnx_path, "--epochs", "2", "--threads", str(threads)]
        if dropout:
            cmd.append("--dropout")
        r = sh(cmd, timeout=7200)
        if r.returncode != 0:
            raise RuntimeError(f"torch train failed: {r.stderr.strip()[-500:]}")
        res = json.loads(r.stdout.strip().splitlines()[-1])
        key = "torch-dropout" if dropout else "torch"
        out[key] = res
        log(f"  {key}: {res['accuracy']}, {res['samples_per_s']:.0f} samples/s")
    return out


def table(result):
    baseline = any("baseline" in row for row in result["throughput"])
    if baseline:
        lines = ["| model | batch | precision | gopt before | gopt after | after / before | PyTorch samples/s | gopt / PyTorch |",
                 "|---|---|---|---|---|---|---|---|"]
    else:
        lines = ["| model | batch | precision | gopt samples/s | PyTorch samples/s | gopt / PyTorch |",
                 "|---|---|---|---|---|---|"]
    for row in result["throughput"]:
        # bf16: gopt --precision bf16 vs. PyTorch's CPU autocast.
        precision = row.get("precision", "f32")
        before = (f"{row['baseline']:.0f} | " if baseline else "")
        after = (f" **{row['speedup']:.2f}x** |" if baseline else "")
        lines.append(f"| {row['model']} | {row['batch']} | {precision} | "
                     f"{before}{row['gopt']:.0f} |{after} {row['torch']:.0f} | "
                     f"**{row['ratio']:.2f}x** |")
    acc = result.get("accuracy")
    if acc:
        lines += ["", "| Fashion-MNIST test accuracy, Adam 1e-3, batch 64 | epoch 1 | epoch 2 |",
                  "|---|---|---|"]
        names = {"gopt": "gopt, mnist_cnn.onnx (exported without dropout)",
                 "torch": "PyTorch, the same network (no dropout)",
                 "gopt-dropout": "gopt, the recipe (dropout 0.25/0.5, training-mode export)",
                 "torch-dropout": "PyTorch, the recipe (dropout 0.25/0.5)"}
        for key in ("gopt", "torch", "gopt-dropout", "torch-dropout"):
            if key not in acc:
                continue
            a = acc[key]["accuracy"]
            lines.append(f"| {names[key]} | {100 * a[0]:.2f}% | {100 * a[1]:.2f}% |")
    return "\n".join(lines)


def update_readme(result, args, json_path):
    md = table(result)
    print(md)
    if args.no_readme:
        return
    readme = os.path.join(ROOT, "README.md")
    text = open(readme).read()
    precisions = sorted({r.get("precision", "f32") for r in result["throughput"]})
    cmd = ("`/usr/bin/python3 benchmarks/training/run.py --repeats "
           f"{result['repeats']}" + (" --accuracy" if "accuracy" in result else "")
           + ("" if precisions == ["f32"] else " --precisions " + ",".join(precisions))
           + "`")
    block = (f"{BEGIN}\n{md}\n\n{result['machine'].get('cpu_model', '')}, "
             f"{result['threads']} threads, {result['date'][:10]}; throughput: "
             f"median of {result['repeats']} interleaved runs of constant-data "
             f"training steps (the graph alone). Produced by {cmd}; raw data: "
             f"[{os.path.basename(json_path)}]({json_path}).\n{END}")
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                      lambda m: block, text, flags=re.S)
        open(readme, "w").write(text)
        log("training: updated README.md")
    else:
        log(f"training: README.md has no {BEGIN} block; not updated")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--accuracy", action="store_true")
    p.add_argument("--precisions", default="f32",
                   help="comma-separated: f32, bf16 (gopt --precision bf16 "
                   "vs. PyTorch's CPU bf16 autocast)")
    p.add_argument("--no-readme", action="store_true")
    p.add_argument("--baseline", help="an older gopt-run binary timed in "
                   "the same interleaved rounds (before/after)")
    p.add_argument("--cases", default="mnist_cnn:64,mnist_cnn:1024,resnet18:32",
                   help="comma-separated MODEL:BATCH")
    p.add_argument("--models-dir", default=SHARED)
    p.add_argument("--out")
    p.add_argument("--from-json", help="re-render the README table from a "
                   "result file instead of running")
    args = p.parse_args()
    if args.from_json:
        result = json.load(open(args.from_json))
        update_readme(result, args, os.path.relpath(args.from_json, ROOT))
        return 0
    if not os.path.isdir(args.models_dir):
        log(f"training benchmark: {args.models_dir} not found; nothing to do")
        return 0
    gopt_run = os.path.join(args.build_dir, "bin", "gopt-run")
    steps_for = {64: args.steps, 1024: max(3, args.steps // 4),
                 32: max(2, args.steps // 10)}
    cases = []
    for case in args.cases.split(","):
        model, batch = case.split(":")
        cases.append((model, int(batch),
                      steps_for.get(int(batch), max(2, args.steps // 4))))
    rows = []
    for precision in args.precisions.split(","):
        if precision not in ("f32", "bf16"):
            p.error(f"--precisions: unknown precision '{precision}'")
        for model, batch, steps in cases:
            onnx_path = os.path.join(args.models_dir, model + ".onnx")
            g, t, b, load = [], [], [], []
            for rep in range(args.repeats):
                load.append(run_cpu.loadavg())
                if args.baseline:
                    b.append(gopt_time(args.baseline, onnx_path, batch, steps,
                                       args.threads, precision))
                g.append(gopt_time(gopt_run, onnx_path, batch, steps,
                                   args.threads, precision))
                t.append(torch_time(model, batch, steps, args.threads,
                                    onnx_path, precision))
                log(f"{model} b{batch} {precision} repeat {rep + 1} "
                    f"(load {load[-1][0]:.1f}): "
                    + (f"baseline {b[-1]:.1f}, " if b else "")
                    + f"gopt {g[-1]:.1f}, torch {t[-1]:.1f} samples/s")
            gm, tm = statistics.median(g), statistics.median(t)
            row = {"model": model, "batch": batch, "precision": precision,
                   "gopt": gm, "torch": tm, "ratio": gm / tm,
                   "gopt_all": g, "torch_all": t, "loadavg": load}
            if b:
                row.update({"baseline": statistics.median(b),
                            "speedup": gm / statistics.median(b),
                            "baseline_all": b})
            rows.append(row)
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": run_cpu.machine_info(), "threads": args.threads,
              "repeats": args.repeats, "throughput": rows}
    if args.accuracy:
        log("accuracy: 2 epochs of Fashion-MNIST each (minutes)")
        result["accuracy"] = accuracy_runs(
            gopt_run, os.path.join(args.models_dir, "mnist_cnn.onnx"), args.threads)
    out = args.out or os.path.join(
        BENCH, "results", "training-" + datetime.date.today().isoformat() + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    update_readme(result, args, os.path.relpath(out, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
