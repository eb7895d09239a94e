#!/usr/bin/python3
"""gopt vs. ONNX Runtime and PyTorch on the CPU, in one run, as ratios.

  benchmarks/run_cpu.py [--build-dir build] [--models mnist_cnn,resnet18,...]
                        [--batches 1,32] [--threads 2] [--repeats 3]
                        [--scale 1.0] [--out benchmarks/results/cpu-DATE.json]

For every model of ../shared/models (skipped with a message when that
directory is absent) and every batch size, it times, interleaved
(A B C ... A B C ...) so that machine drift hits every contestant alike:

  gopt       build/bin/gopt-run MODEL.onnx (as imported, no pass pipeline)
  gopt-opt   the same with --pipeline 'builtin.module(gopt-optimize{target=cpu})'
             (only when gopt-opt --help lists gopt-optimize)
  ort        ONNX Runtime (npm's onnxruntime-node, graph optimization 'all'),
             ../shared/peers/ort_bench.js
  torch      PyTorch eager, ../shared/peers/torch_bench.py --mode eager
  torch-jit  PyTorch torch.jit.trace + optimize_for_inference
  NAME-passive  NAME with OMP_WAIT_POLICY=passive (gopt and PyTorch run on
             libgomp, whose spinning threads collapse on an oversubscribed
             machine; ONNX Runtime has its own thread pool)

Each contestant reports the median per-iteration latency after its warm-up;
the script keeps the median throughput over the repeats and reports ratios
gopt / peer (> 1 means gopt is faster). Before timing, it checks gopt's
output against the PyTorch output stored beside each model (NAME.output.npy,
batch 2) on the oneDNN (cpu) and the reference backend.

Writes benchmarks/results/cpu-DATE.json (every sample, the load average, the
machine, versions, gopt's per-op profile of each configuration) and then runs
benchmarks/report.py on it (Markdown table, README section, plot) unless
--no-report. Needs the peers: scripts/install-peers.sh. Run with Debian's
/usr/bin/python3. A benchmark, not a test: scripts/test.sh never runs it.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (warmup, iterations) per model and batch: enough timed work (~1-3 s per
# run on a 2-core machine) for a stable median, and the same for every
# contestant so that they are timed alike.
ITERATIONS = {
    ("mnist_cnn", 1): (20, 200),
    ("mnist_cnn", 32): (10, 60),
    ("resnet18", 1): (5, 30),
    ("resnet18", 32): (2, 8),
    ("resnet18_bn", 1): (5, 30),
    ("resnet18_bn", 32): (2, 8),
    ("mobilenet_v2", 1): (5, 40),
    ("mobilenet_v2", 32): (2, 10),
    ("resnet50", 1): (3, 15),
    ("resnet50", 32): (1, 4),
    ("resnet50_bn", 1): (3, 15),
    ("resnet50_bn", 32): (1, 4),
}
DEFAULT_MODELS = "mnist_cnn,resnet18,resnet18_bn,mobilenet_v2"
# What gopt-run --optimize runs on the CPU, spelled out so the results name it.
# (gopt-run before 7b0b372 nested --pipeline one level too deep and ran it on
# nothing: check that the "optimized" profile has fewer ops.)
OPT_PIPELINE = "builtin.module(gopt-optimize{target=cpu})"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def machine_info():
    info = {"platform": platform.platform(), "nproc": os.cpu_count()}
    out = sh(["lscpu"]).stdout
    for line in out.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Model name":
            info["cpu_model"] = value
        elif key == "Flags":
            flags = value.split()
            info["avx512_flags"] = sorted(f for f in flags if f.startswith("avx512"))
            info["amx_flags"] = sorted(f for f in flags if f.startswith("amx"))
            info["avx2"] = "avx2" in flags
        elif key in ("CPU(s)", "Thread(s) per core", "L3 cache"):
            info[key.lower().replace("(", "").replace(")", "").replace(" ", "_")] = value
    return info


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in output")


class Bench:
    def __init__(self, a):
        self.a = a
        self.gopt_run = os.path.join(a.build_dir, "bin", "gopt-run")
        self.gopt_opt = os.path.join(a.build_dir, "bin", "gopt-opt")
        self.gopt_reads_onnx = True
        self.work = os.path.join(HERE, "work")
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        self.env["ORT_NODE_MODULE"] = os.path.join(
            a.peers_dir, "node_modules", "onnxruntime-node")
        self.env.setdefault("OMP_NUM_THREADS", str(a.threads))

    def has_pipeline(self):
        if not os.path.exists(self.gopt_opt):
            return False
        r = sh([self.gopt_opt, "--help"])
        return "gopt-optimize" in r.stdout

    def model_path(self, model):
        return os.path.join(self.a.models_dir, model + ".onnx")

    def gopt_model_path(self, model):
        """The file gopt-run gets: the .onnx itself when gopt-run imports
        ONNX, else the model imported once with gopt-translate --import-onnx."""
        if self.gopt_reads_onnx:
            return self.model_path(model)
        mlir = os.path.join(self.work, model + ".mlir")
        if not os.path.exists(mlir) or os.path.getmtime(mlir) < os.path.getmtime(self.model_path(model)):
            translate = os.path.join(self.a.build_dir, "bin", "gopt-translate")
            r = sh([translate, "--import-onnx", self.model_path(model), "-o", mlir])
            if r.returncode != 0:
                raise RuntimeError(f"gopt-translate --import-onnx {model}: {r.stderr.strip()[-300:]}")
        return mlir

    def probe_onnx(self, model):
        r = sh([self.gopt_run, self.model_path(model), "--warmup", "0", "--iterations", "1"])
        self.gopt_reads_onnx = not ("importer" in r.stderr and r.returncode != 0)
        return self.gopt_reads_onnx

    # Each returns (result dict or None, error string or None).
    def run_gopt(self, model, batch, warmup, iters, pipeline, env=None):
        out = os.path.join(self.work, f"{model}-b{batch}-{'opt' if pipeline else 'raw'}.json")
        if os.path.exists(out):
            os.remove(out)
        cmd = [self.gopt_run, self.gopt_model_path(model), "--threads", str(self.a.threads),
               "--batch", str(batch), "--warmup", str(warmup),
               "--iterations", str(iters), "--json", out]
        if pipeline:
            cmd += ["--pipeline", pipeline]
        r = sh(cmd, env=env or self.env, timeout=self.a.timeout)
        if r.returncode != 0:
            return None, (r.stderr.strip() or r.stdout.strip())[-400:]
        with open(out) as f:
            return json.load(f), None

    def run_ort(self, model, batch, warmup, iters):
        cmd = ["node", os.path.join(self.a.peers_scripts, "ort_bench.js"),
               self.model_path(model), "--batch", str(batch), "--threads",
               str(self.a.threads), "--warmup", str(warmup), "--iterations",
               str(iters), "--opt", "all"]
        r = sh(cmd, env=self.env, timeout=self.a.timeout)
        if r.returncode != 0:
            return None, r.stderr.strip()[-400:]
        return last_json_line(r.stdout), None

    def run_torch(self, model, batch, warmup, iters, mode, env=None):
        cmd = ["/usr/bin/python3", os.path.join(self.a.peers_scripts, "torch_bench.py"),
               model, "--batch", str(batch), "--threads", str(self.a.threads),
               "--warmup", str(warmup), "--iterations", str(iters), "--mode", mode]
        r = sh(cmd, env=env or self.env, timeout=self.a.timeout)
        if r.returncode != 0:
            return None, r.stderr.strip()[-400:]
        return last_json_line(r.stdout), None

    def check_gopt(self, model, backend, pipeline):
        """gopt's output vs. PyTorch's stored output (batch 2)."""
        base = os.path.join(self.a.models_dir, model)
        if not (os.path.exists(base + ".input.npy") and os.path.exists(base + ".output.npy")):
            return {"status": "no reference data"}
        cmd = [self.gopt_run, self.gopt_model_path(model), "--backend", backend,
               "--batch", "2", "--warmup", "0", "--iterations", "1",
               "--threads", str(self.a.threads),
               "--input", "input=" + base + ".input.npy",
               "--compare-npy", "output=" + base + ".output.npy",
               "--rtol", "1e-4", "--atol", "1e-5"]
        if pipeline:
            cmd += ["--pipeline", pipeline]
        try:
            r = sh(cmd, env=self.env, timeout=max(self.a.timeout, 600))
        except subprocess.TimeoutExpired:
            return {"status": "timeout"}
        m = re.search(r"max_abs_err (\S+) max_rel_err (\S+): (\w+)", r.stdout)
        if m:
            return {"status": "ok" if m.group(3) == "ok" else "mismatch",
                    "max_abs_err": float(m.group(1)), "max_rel_err": float(m.group(2))}
        return {"status": "error", "message": (r.stderr.strip() or r.stdout.strip())[-300:]}


def versions(bench):
    v = {}
    r = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    v["gopt_commit"] = r.stdout.strip()
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout
    v["gopt_worktree_modified"] = bool(dirty.strip())
    r = sh(["node", "-e", "console.log(require(process.env.ORT_NODE_MODULE).env.versions.common)"],
           env=bench.env)
    v["onnxruntime_node"] = r.stdout.strip() or None
    r = sh(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"])
    v["torch"] = r.stdout.strip() or None
    r = sh(["node", "--version"])
    v["node"] = r.stdout.strip()
    return v


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build",
                   help="gopt build directory with bin/gopt-run (default: build)")
    p.add_argument("--models-dir", default=os.path.join(ROOT, "..", "shared", "models"))
    p.add_argument("--peers-scripts", default=os.path.join(ROOT, "..", "shared", "peers"),
                   help="directory with ort_bench.js and torch_bench.py")
    p.add_argument("--peers-dir", default=os.path.join(HERE, ".peers"),
                   help="where scripts/install-peers.sh put onnxruntime-node")
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--batches", default="1,32")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply iteration counts (e.g. 0.3 for a quick look)")
    p.add_argument("--contestants", default="gopt,gopt-opt,gopt-opt-passive,ort,torch,torch-jit,torch-jit-passive")
    p.add_argument("--no-check", action="store_true", help="skip the output check")
    p.add_argument("--timeout", type=int, default=600, help="seconds per run")
    p.add_argument("--out", default=None)
    p.add_argument("--no-report", action="store_true")
    a = p.parse_args()
    if not os.path.isabs(a.build_dir):
        a.build_dir = os.path.join(ROOT, a.build_dir)

    if not os.path.isdir(a.models_dir):
        log(f"run_cpu: no models directory {a.models_dir}: nothing to benchmark "
            "(the reference models live in ../shared/models)")
        return 0
    bench = Bench(a)
    if not os.path.exists(bench.gopt_run):
        log(f"run_cpu: {bench.gopt_run} does not exist: build gopt first "
            "(ninja -C BUILD gopt-run gopt-opt) or pass --build-dir")
        return 1
    if not os.path.isdir(bench.env["ORT_NODE_MODULE"]):
        log(f"run_cpu: no onnxruntime-node in {a.peers_dir}: run scripts/install-peers.sh")
        return 1

    contestants = a.contestants.split(",")
    if "gopt-opt" in contestants and not bench.has_pipeline():
        log("run_cpu: gopt-opt --help lists no gopt-optimize pipeline: "
            "timing gopt without it only")
        contestants.remove("gopt-opt")
    models = [m for m in a.models.split(",") if m]
    missing = [m for m in models if not os.path.exists(bench.model_path(m))]
    for m in missing:
        log(f"run_cpu: skipping {m}: {bench.model_path(m)} not found")
    models = [m for m in models if m not in missing]
    batches = [int(b) for b in a.batches.split(",")]
    if models and not bench.probe_onnx(models[0]):
        log("run_cpu: this gopt-run does not import .onnx yet: importing each model "
            "once with gopt-translate --import-onnx into benchmarks/work/")

    started = datetime.datetime.now(datetime.timezone.utc)
    result = {
        "kind": "gopt-cpu-benchmark",
        "started": started.isoformat(timespec="seconds"),
        "command": "benchmarks/run_cpu.py " + " ".join(sys.argv[1:]),
        "threads": a.threads, "repeats": a.repeats, "scale": a.scale,
        "machine": machine_info(), "versions": versions(bench),
        "pipeline": OPT_PIPELINE if "gopt-opt" in contestants else None,
        "contestants": contestants,
        "gopt_input": "onnx" if bench.gopt_reads_onnx else "mlir from gopt-translate --import-onnx",
        "loadavg_start": loadavg(),
        "checks": {}, "runs": [],
    }
    log(f"run_cpu: {result['machine'].get('cpu_model')}, load average "
        f"{result['loadavg_start']}, contestants {contestants}")

    if not a.no_check:
        for model in models:
            for name, pipeline in (("gopt", ""), ("gopt-opt", OPT_PIPELINE)):
                if name not in contestants:
                    continue
                for backend in ("cpu", "reference"):
                    c = bench.check_gopt(model, backend, pipeline)
                    result["checks"][f"{model}/{name}/{backend}"] = c
                    log(f"  check {model} {name} {backend}: {c}")

    for model in models:
        for batch in batches:
            warmup, iters = ITERATIONS.get((model, batch), (5, 20))
            iters = max(3, int(round(iters * a.scale)))
            warmup = max(1, int(round(warmup * a.scale)))
            for rep in range(a.repeats):
                for c in contestants:
                    t0 = time.time()
                    la = loadavg()[0]
                    base = c[:-len("-passive")] if c.endswith("-passive") else c
                    env = dict(bench.env, OMP_WAIT_POLICY="passive") if base != c else None
                    try:
                        if base == "gopt":
                            res, err = bench.run_gopt(model, batch, warmup, iters, "", env)
                        elif base == "gopt-opt":
                            res, err = bench.run_gopt(model, batch, warmup, iters, OPT_PIPELINE, env)
                        elif base == "ort":
                            res, err = bench.run_ort(model, batch, warmup, iters)
                        elif base == "torch":
                            res, err = bench.run_torch(model, batch, warmup, iters, "eager", env)
                        elif base == "torch-jit":
                            res, err = bench.run_torch(model, batch, warmup, iters, "jit", env)
                        else:
                            raise ValueError(c)
                    except subprocess.TimeoutExpired:
                        res, err = None, f"timeout after {a.timeout} s"
                    run = {"model": model, "batch": batch, "contestant": c,
                           "repeat": rep, "warmup": warmup, "iterations": iters,
                           "loadavg_1min": la, "wall_s": round(time.time() - t0, 2)}
                    if res is None:
                        run["error"] = err
                        log(f"  {model} b{batch} {c} #{rep}: FAILED: {err.splitlines()[-1] if err else ''}")
                    else:
                        for k in ("median_ms", "p90_ms", "min_ms", "throughput_per_s"):
                            run[k] = res.get(k)
                        if c.startswith("gopt"):
                            # Whether gopt's threads spun between ops or slept
                            # (gopt-run goes passive on a busy machine).
                            run["omp_wait"] = res.get("omp_wait")
                            run["peak_memory_bytes"] = res.get("peak_memory_bytes")
                            run["ops"] = res.get("ops", [])[:25]
                        log(f"  {model} b{batch} {c} #{rep}: {run['throughput_per_s']:.1f}/s "
                            f"(median {run['median_ms']:.3f} ms, load {la})")
                    result["runs"].append(run)

    result["loadavg_end"] = loadavg()
    result["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    summarize(result)
    out = a.out or os.path.join(HERE, "results", f"cpu-{started.strftime('%Y-%m-%d-%H%M')}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    log(f"run_cpu: wrote {out}")
    if not a.no_report:
        return subprocess.call(["/usr/bin/python3", os.path.join(HERE, "report.py"), out])
    return 0


def summarize(result):
    """Median throughput per (model, batch, contestant) and ratios gopt/peer."""
    groups = {}
    for r in result["runs"]:
        if r.get("throughput_per_s"):
            groups.setdefault((r["model"], r["batch"], r["contestant"]), []).append(r)
    summary = []
    keys = sorted({(m, b) for m, b, _ in groups}, key=lambda k: (k[0], k[1]))
    for model, batch in keys:
        row = {"model": model, "batch": batch, "throughput_per_s": {}, "ratio": {}}
        for (m, b, c), runs in groups.items():
            if (m, b) == (model, batch):
                tps = [r["throughput_per_s"] for r in runs]
                row["throughput_per_s"][c] = statistics.median(tps)
                row.setdefault("spread", {})[c] = [min(tps), max(tps)]
        tp = row["throughput_per_s"]
        for g in ("gopt", "gopt-opt", "gopt-opt-passive"):
            for peer in ("ort", "torch", "torch-jit", "torch-jit-passive"):
                if g in tp and peer in tp:
                    row["ratio"][f"{g}/{peer}"] = tp[g] / tp[peer]
        if "gopt" in tp and "gopt-opt" in tp:
            row["ratio"]["gopt-opt/gopt"] = tp["gopt-opt"] / tp["gopt"]
        summary.append(row)
    result["summary"] = summary
    # Keep the per-op profile of one run per configuration (the median one).
    for (m, b, c), runs in groups.items():
        if not c.startswith("gopt"):
            continue
        runs = sorted(runs, key=lambda r: r["throughput_per_s"])
        keep = runs[len(runs) // 2]
        for r in runs:
            if r is not keep:
                r.pop("ops", None)


if __name__ == "__main__":
    sys.exit(main())
