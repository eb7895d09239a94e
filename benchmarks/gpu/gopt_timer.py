"""Times a plan with a bundle's gopt-run on the CUDA backend (run.py and
int8.py share it)."""
import json
import os
import subprocess


def time_gopt(bundle, plan, batch, warmup, iterations, out, env_extra=None):
    """gopt-run's median and throughput, or {"error": ...}."""
    report = os.path.join(out, "gopt-report.json")
    cmd = [os.path.join(bundle, "bin", "gopt-run"), plan, "--backend", "cuda",
           "--batch", str(batch), "--warmup", str(warmup),
           "--iterations", str(iterations), "--json", report]
    env = dict(os.environ, **(env_extra or {}))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=env)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip()[-300:]}
    with open(report) as f:
        r = json.load(f)
    return {"median_ms": r["median_ms"], "throughput_per_s": r["throughput_per_s"]}
