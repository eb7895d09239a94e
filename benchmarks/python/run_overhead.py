#!/usr/bin/python3
"""InferenceSession.run's overhead over gopt-run, per iteration, at batch 1
on the MNIST CNN.

Both run the same plan (the model optimized once with gopt-optimize and
saved as .gplan) with the same threads and OpenMP wait policy, in processes
of their own, alternating A B A B ... `--repeats` times so machine drift
hits both alike. gopt-run's figure is its reported median per-iteration
latency (Session::run alone, inputs bound once); Python's is the median
wall time of one `session.run(None, {"input": x})` call, everything the
binding does included (feed checks, binding the array in place, the run
with the GIL released, copying the output into a new array).

  /usr/bin/python3 benchmarks/python/run_overhead.py [--build-dir build]
      [--onnx mnist_cnn.onnx] [--threads 1] [--repeats 5] [--out FILE.json]

Target: overhead <= 5%. On a shared machine the processes' medians drift
by more than that between runs; the per-pair ratios and their median are
what to read (and the ratio of the fastest iterations, which load hardly
moves).
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
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from mnist import import_gopt, mnist_cnn_onnx  # noqa: E402

PY_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, gopt
plan, x_path, threads, warmup, iterations = sys.argv[2:7]
session = gopt.InferenceSession(plan, threads=int(threads))
feed = {"input": np.load(x_path)}
run = session.run
for _ in range(int(warmup)):
    run(None, feed)
times = []
clock = time.perf_counter
for _ in range(int(iterations)):
    start = clock()
    run(None, feed)
    times.append((clock() - start) * 1e3)
times.sort()
print(json.dumps({"median_ms": times[len(times) // 2],
                  "min_ms": times[0], "p90_ms": times[int(len(times) * 0.9)]}))
"""


def run_cli(gopt_run, plan, x_path, threads, warmup, iterations, env):
    out = subprocess.run(
        [gopt_run, plan, "--input", f"input={x_path}", "--threads", str(threads),
         "--warmup", str(warmup), "--iterations", str(iterations)],
        check=True, capture_output=True, text=True, env=env).stdout
    m = re.search(r"latency \(ms\): median ([\d.]+)\s+p90 ([\d.]+)\s+min ([\d.]+)", out)
    return {"median_ms": float(m.group(1)), "p90_ms": float(m.group(2)),
            "min_ms": float(m.group(3))}


def run_python(python_dir, plan, x_path, threads, warmup, iterations, env):
    out = subprocess.run(
        [sys.executable, "-c", PY_CHILD, python_dir, plan, x_path, str(threads),
         str(warmup), str(iterations)],
        check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--onnx", help="the MNIST CNN (default: ../shared/models "
                    "or exported from PyTorch)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--omp-wait", default="passive",
                    help="OMP_WAIT_POLICY of both processes")
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--out", help="JSON result (default: "
                    "benchmarks/results/python-overhead-DATE.json)")
    args = ap.parse_args()

    gopt = import_gopt(args.build_dir)
    import numpy as np
    gopt_run = os.path.abspath(os.path.join(args.build_dir, "bin", "gopt-run"))
    python_dir = os.path.abspath(os.path.join(args.build_dir, "python"))
    env = dict(os.environ, OMP_WAIT_POLICY=args.omp_wait)
    env.pop("PYTHONPATH", None)

    with tempfile.TemporaryDirectory(prefix="gopt-bench-") as tmp:
        onnx_path = mnist_cnn_onnx(tmp, args.onnx)
        plan = os.path.join(tmp, "mnist_cnn.gplan")
        gopt.load(onnx_path).optimize(target="cpu").save(plan)
        x_path = os.path.join(tmp, "x.npy")
        np.save(x_path, np.random.default_rng(0).standard_normal(
            (1, 1, 28, 28), np.float32))
        samples = []
        for repeat in range(args.repeats):
            cli = run_cli(gopt_run, plan, x_path, args.threads, args.warmup,
                          args.iterations, env)
            py = run_python(python_dir, plan, x_path, args.threads,
                            args.warmup, args.iterations, env)
            overhead = py["median_ms"] / cli["median_ms"] - 1
            samples.append({"gopt_run": cli, "python": py, "overhead": overhead,
                            "overhead_of_min": py["min_ms"] / cli["min_ms"] - 1,
                            "loadavg": os.getloadavg()[0]})
            print(f"repeat {repeat + 1}: gopt-run {cli['median_ms']:.4f} ms, "
                  f"InferenceSession.run {py['median_ms']:.4f} ms: "
                  f"{100 * overhead:+.1f}%", flush=True)

    overheads = [s["overhead"] for s in samples]
    result = {
        "benchmark": "InferenceSession.run vs gopt-run per iteration",
        "model": "mnist_cnn (gopt-optimize{target=cpu}), batch 1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(), "threads": args.threads,
        "omp_wait_policy": args.omp_wait, "warmup": args.warmup,
        "iterations": args.iterations, "samples": samples,
        "median_overhead": statistics.median(overheads),
        "median_overhead_of_min": statistics.median(
            s["overhead_of_min"] for s in samples),
        "gopt_run_median_ms": statistics.median(
            s["gopt_run"]["median_ms"] for s in samples),
        "python_median_ms": statistics.median(
            s["python"]["median_ms"] for s in samples),
    }
    out = args.out or os.path.join(
        os.path.dirname(__file__), "..", "results",
        "python-overhead-" + datetime.datetime.utcnow().strftime("%Y-%m-%d-%H%M")
        + ".json")
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"median overhead {100 * result['median_overhead']:+.1f}% "
          f"(of the fastest iterations: "
          f"{100 * result['median_overhead_of_min']:+.1f}%) "
          f"(gopt-run {result['gopt_run_median_ms']:.4f} ms, Python "
          f"{result['python_median_ms']:.4f} ms per iteration; target <= 5%): "
          f"{os.path.relpath(out)}")


if __name__ == "__main__":
    main()
