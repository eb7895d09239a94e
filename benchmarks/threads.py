#!/usr/bin/python3
"""How gopt uses a second core: intra-op scaling, pinning, and what running
independent branches at once (inter-op parallelism) could still gain.

  benchmarks/threads.py [--build-dir build] [--models DIR] [--batches 1,32]
                        [--torchvision googlenet,...] [--repeats 3]
                        [--out benchmarks/results/threads-DATE.json]

For every MODEL.onnx of --models (../shared/models by default) and every
torchvision model named (exported once into .models/torchvision, as
real_models.py does), at each batch, interleaved rounds of

  1 thread        gopt-run MODEL --optimize --threads 1
  2 threads       the same with --threads 2 (threads where the kernel puts
                  them)
  2 pinned        --threads 2 --affinity cores (each thread on a core of
                  its own)

report the median step times, the two-thread speed-up and its efficiency
(speed-up / 2), and the pinned/unpinned ratio. Inter-op parallelism runs
independent ops at once, each on fewer threads; on two cores it can at best
make the step as fast as two single-thread halves, so 1 / efficiency bounds
what it could gain over the intra-op run. The per-op profiles of the 1- and
2-thread runs then name the ops that lose the most time to poor scaling
(2-thread time minus half the 1-thread time): the ones a concurrent
schedule would have to overlap. Every run uses gopt-run's own OpenMP wait
choice. Run on a quiet machine: other load makes the 2-thread runs slow.
Writes the JSON and prints a Markdown table. A benchmark, not a test; run
with Debian's /usr/bin/python3.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
TORCHVISION = os.path.join(ROOT, ".models", "torchvision")
CONFIGS = [("1 thread", ["--threads", "1"]),
           ("2 threads", ["--threads", "2"]),
           ("2 pinned", ["--threads", "2", "--affinity", "cores"])]


def progress(text):
    if sys.stderr.isatty():
        print(text, file=sys.stderr, flush=True)


def run(gopt_run, model, batch, extra, iterations):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [gopt_run, model, "--optimize", "--batch", str(batch),
               "--warmup", str(max(2, iterations // 10)), "--iterations",
               str(iterations), "--json", report.name] + extra
        env = dict(os.environ)
        for name in ("OMP_WAIT_POLICY", "OMP_PLACES", "OMP_PROC_BIND"):
            env.pop(name, None)
        done = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()[-400:]}")
        with open(report.name) as f:
            return json.load(f)


def torchvision_model(name):
    path = os.path.join(TORCHVISION, name + ".onnx")
    if not os.path.isfile(path):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import torchvision_zoo

        os.makedirs(TORCHVISION, exist_ok=True)
        progress(f"exporting {name}")
        torchvision_zoo.export(name, False, TORCHVISION, dynamic_batch=True)
    return path


def worst_ops(one, two, count=3):
    """The ops whose 2-thread time exceeds half their 1-thread time most."""
    single = {op["name"]: op["mean_ms"] for op in one["ops"]}
    losses = []
    for op in two["ops"]:
        if op["name"] in single:
            losses.append((op["mean_ms"] - single[op["name"]] / 2, op["kind"],
                           single[op["name"]], op["mean_ms"]))
    losses.sort(reverse=True)
    return [{"kind": kind, "loss_ms": loss, "one_ms": t1, "two_ms": t2}
            for loss, kind, t1, t2 in losses[:count] if loss > 0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--torchvision", default="googlenet",
                   help="torchvision models to add ('' for none)")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args()
    gopt_run = os.path.join(a.build_dir, "bin", "gopt-run")
    models = []
    if os.path.isdir(a.models):
        models += [(f[:-5], os.path.join(a.models, f))
                   for f in sorted(os.listdir(a.models)) if f.endswith(".onnx")]
    else:
        print(f"threads: no models directory {a.models}; skipping it",
              file=sys.stderr)
    models += [(name, torchvision_model(name))
               for name in a.torchvision.split(",") if name]
    date = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = a.out or os.path.join("benchmarks", "results", f"threads-{date}.json")
    rows = []
    for name, path in models:
        for batch in (int(b) for b in a.batches.split(",")):
            iterations = 40 if batch == 1 else 6
            times = {label: [] for label, _ in CONFIGS}
            reports = {}
            for r in range(a.repeats):
                for label, extra in CONFIGS:
                    progress(f"{name} batch {batch} {label} ({r + 1}/{a.repeats})")
                    rep = run(gopt_run, path, batch, extra, iterations)
                    times[label].append(rep["median_ms"])
                    reports[label] = rep
            med = {label: statistics.median(t) for label, t in times.items()}
            speedup = med["1 thread"] / med["2 threads"]
            rows.append({"model": name, "batch": batch, "median_ms": med,
                         "samples_ms": times, "speedup": speedup,
                         "efficiency": speedup / 2,
                         "pinned_ratio": med["2 threads"] / med["2 pinned"],
                         "worst_ops": worst_ops(reports["1 thread"],
                                                reports["2 threads"])})
    result = {"date": date, "load": os.getloadavg()[0], "repeats": a.repeats,
              "rows": rows}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"Load average {result['load']:.1f} at the end; median of "
          f"{a.repeats} interleaved rounds.\n")
    print("| model | batch | 1 thread (ms) | 2 threads (ms) | speed-up | "
          "efficiency | inter-op bound | pinned / unpinned | ops losing most "
          "to scaling |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    for r in rows:
        ops = ", ".join(f"{o['kind']} {o['loss_ms']:.2f} ms"
                        for o in r["worst_ops"])
        print(f"| {r['model']} | {r['batch']} | {r['median_ms']['1 thread']:.2f} | "
              f"{r['median_ms']['2 threads']:.2f} | {r['speedup']:.2f}x | "
              f"{100 * r['efficiency']:.0f}% | {1 / r['efficiency']:.2f}x | "
              f"{r['pinned_ratio']:.2f}x | {ops} |")
    print(f"\nProduced by `/usr/bin/python3 benchmarks/threads.py --batches "
          f"{a.batches} --repeats {a.repeats}`; raw data: `{out}`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
