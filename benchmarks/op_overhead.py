#!/usr/bin/python3
"""The runtime's cost per op per step, apart from the ops' arithmetic.

  benchmarks/op_overhead.py [--build-dir build] [--ops 500] [--no-callgrind]

A plan of N tiny ops (alternating relu and neg on a [1, 16] tensor: the
kernels do almost nothing) is run by gopt-run on the CPU with one thread:
- timed natively (median of 2000 steps after 100 warm-up): ns per op;
- under `valgrind --tool=callgrind` at 10 and 110 steps: the difference
  divided by 100 x N is the instructions each op costs per step, schedule,
  profiling and kernel call included. Instruction counts do not depend on
  the machine's load, so they compare builds on a shared machine.
oneDNN is limited to AVX2 under valgrind (which does not decode AVX-512).
Prints one JSON line. A benchmark, not a test.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def chain(n):
    lines = ['func.func @main(%x: tensor<?x16xf32> {gopt.name = "x"}) -> '
             '(tensor<?x16xf32> {gopt.name = "y"}) {']
    value = "%x"
    for i in range(n):
        op = "gopt.relu" if i % 2 == 0 else "gopt.neg"
        lines.append(f"  %v{i} = {op} {value} : (tensor<?x16xf32>) -> "
                     "tensor<?x16xf32>")
        value = f"%v{i}"
    lines += [f"  return {value} : tensor<?x16xf32>", "}"]
    return "\n".join(lines) + "\n"


def instructions(gopt_run, plan, steps, tmp):
    out = os.path.join(tmp, f"callgrind.{steps}")
    # An explicit wait policy: gopt-run would otherwise re-execute itself to
    # pick one, which valgrind cannot follow.
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", OMP_NUM_THREADS="1",
               OMP_WAIT_POLICY="passive")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
         gopt_run, plan, "--threads", "1", "--batch", "1", "--warmup", "0",
         "--iterations", str(steps)],
        capture_output=True, text=True, env=env, timeout=900)
    m = re.search(r"Collected : (\d+)", done.stderr)
    if not m:
        sys.exit(f"op_overhead: callgrind failed: {done.stderr[-400:]}")
    return int(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--ops", type=int, default=500)
    p.add_argument("--no-callgrind", action="store_true")
    a = p.parse_args()
    bin_dir = os.path.join(a.build_dir, "bin")
    gopt_run = os.path.join(bin_dir, "gopt-run")
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "chain.mlir")
        plan = os.path.join(tmp, "chain.gplan")
        with open(graph, "w") as f:
            f.write(chain(a.ops))
        subprocess.run([os.path.join(bin_dir, "gopt-translate"), "--emit-plan",
                        graph, "-o", plan], check=True)
        report = os.path.join(tmp, "report.json")
        subprocess.run([gopt_run, plan, "--threads", "1", "--batch", "1",
                        "--warmup", "100", "--iterations", "2000", "--json",
                        report], check=True, capture_output=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1",
                                OMP_WAIT_POLICY="passive"))
        with open(report) as f:
            median_ms = json.load(f)["median_ms"]
        result = {"ops": a.ops, "ns_per_op": median_ms * 1e6 / a.ops}
        if not a.no_callgrind:
            few = instructions(gopt_run, plan, 10, tmp)
            many = instructions(gopt_run, plan, 110, tmp)
            result["instructions_per_op"] = (many - few) / (100 * a.ops)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
