#!/usr/bin/python3
"""How far each model is from this CPU's measured roofline, in one run.

  benchmarks/roofline.py [--build-dir build] [--threads 2] [--batches 1,32]
                         [--models DIR] [--precisions f32,bf16,int8]
                         [--repeats 3]
                         [--out benchmarks/results/roofline-DATE.json]
                         [--doc docs/benchmarks.md]

1. The compute roof: a matmul microbenchmark, gopt-run on a chain of four
   [B, 1024] x [1024, 1024] matmuls (B = 2048) compiled with gopt's default
   pipeline at each precision (`--optimize --precision P`; int8: static
   quantization, gopt-quantize with minmax ranges calibrated on one batch
   of random data, as for the models below): the matmuls'
   flops over their mean times in the profile (not the casts at the chain's
   ends), the best of three runs: the rate oneDNN reaches here on large
   GEMMs, which bounds what a model can reach at that precision.
2. The memory roof: a chain of eight [1, 2048] x [2048, 2048] f32 matmuls,
   each with weights of its own (128 MiB in all, more than the caches keep
   between steps): the weights' bytes over the matmuls' times, the rate at
   which oneDNN's kernels stream constant weights from memory. At batch 1
   a model reads each weight once per step and does little arithmetic per
   byte, so this rate, not the GEMM rate, bounds it.
3. The models: every MODEL.onnx of --models (the reference models of
   make_models.py by default) at each of --batches, `--optimize
   --precision P`; gopt-run's report gives the step's arithmetic (the ops'
   ODS flopFunction: convolutions, matmuls, recurrences), the bytes of its
   constants (the weights, read once per step) and its median time. Its
   roofline time is the larger of arithmetic / compute roof and weight
   bytes / memory roof; the fraction is that over the measured time (100%:
   the model runs at the bound of its batch and precision).
   Roofs and models each take the best of --repeats runs (3): on a shared
   machine a run only loses time to other load. Every run has the same
   OpenMP wait policy (--wait, default active), and the report gives the
   load average: with other work on the cores the fractions mean little.

A model below its roofline is limited by something the roofs do not count:
activations' memory traffic, per-op overhead (small convolutions,
depthwise layers), or weights not read at streaming speed; the fraction
says how much of the machine it leaves unused, not why. Progress goes to
stderr, the table to stdout; with --doc the table replaces the part of that
file between <!-- roofline:KIND:begin --> and <!-- roofline:KIND:end -->,
KIND being the machine's widest matrix unit (amx, avx512-bf16, avx512 or
avx2), so that each kind of CPU keeps its own table. A
benchmark, not a test. Run with Debian's /usr/bin/python3.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
PEAK_BATCH, PEAK_WIDTH, PEAK_DEPTH = 2048, 1024, 4
STREAM_WIDTH, STREAM_DEPTH = 2048, 8
WAIT_POLICY = "active"


def matmul_chain(w, depth):
    """A graph of `depth` chained [B, w] x [w, w] matmuls, each with weights
    of its own (distinct values, so that no pass merges them)."""
    lines = [f'func.func @main(%x: tensor<?x{w}xf32> {{gopt.name = "x"}}) '
             f'-> (tensor<?x{w}xf32> {{gopt.name = "y"}}) {{']
    value = "%x"
    for i in range(depth):
        # Small weights keep the chain's values finite in every precision.
        lines.append(f"  %w{i} = gopt.constant dense<{0.001 + 1e-5 * i:.5f}> : "
                     f"tensor<{w}x{w}xf32>")
        lines.append(f"  %y{i} = gopt.matmul {value}, %w{i} : "
                     f"(tensor<?x{w}xf32>, tensor<{w}x{w}xf32>) -> "
                     f"tensor<?x{w}xf32>")
        value = f"%y{i}"
    lines.append(f"  return {value} : tensor<?x{w}xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


OPTIMIZE = "builtin.module(gopt-optimize{target=cpu})"
QUANTIZE = ("builtin.module(gopt-optimize{target=cpu},"
            "func.func(gopt-quantize{calibration=%s}))")


def static_int8(gopt_run, model, tmp):
    """MODEL as static int8 (gopt-quantize with minmax ranges calibrated on
    one batch of random data: the ranges do not change the arithmetic's
    speed), written to a .mlir file in TMP that gopt-run runs as is."""
    base = os.path.join(tmp, os.path.splitext(os.path.basename(model))[0])
    ranges, quantized = base + ".ranges.json", base + ".int8.mlir"
    if os.path.exists(quantized):
        return quantized
    gopt_opt = os.path.join(os.path.dirname(gopt_run), "gopt-opt")
    for cmd in ([gopt_run, model, "--pipeline", OPTIMIZE, "--calibrate",
                 "--calibration-out", ranges, "--batch", "4"],
                [gopt_opt, model, "--pass-pipeline=" + QUANTIZE % ranges,
                 "-o", quantized]):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()[-400:]}")
    return quantized


def run_gopt(gopt_run, model, precision, batch, threads, warmup, iterations,
             tmp=None):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        if precision == "int8":
            cmd = [gopt_run, static_int8(gopt_run, model, tmp)]
        else:
            cmd = [gopt_run, model, "--optimize"]
            if precision != "f32":
                cmd += ["--precision", precision]
        cmd += ["--batch", str(batch), "--threads", str(threads), "--warmup",
                str(warmup), "--iterations", str(iterations), "--json",
                report.name]
        # One wait policy for every run: gopt-run would otherwise choose by
        # the machine's load when it starts, which differs run to run.
        env = dict(os.environ, OMP_WAIT_POLICY=WAIT_POLICY)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                              env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()[-400:]}")
        with open(report.name) as f:
            r = json.load(f)
    # The matmuls' own rate (the casts into and out of bf16 at the chain's
    # ends are not arithmetic): their flops over their mean times.
    rows = [row for row in r["ops"] if row.get("flops", 0) > 0]
    op_ms = sum(row["mean_ms"] for row in rows)
    return {"median_ms": r["median_ms"], "flops_per_step": r["flops_per_step"],
            "constant_bytes": r.get("constant_bytes", 0),
            "gflops": r["flops_per_step"] / (r["median_ms"] * 1e6),
            "op_ms": op_ms,
            "op_gflops": (sum(row["flops"] for row in rows) / (op_ms * 1e6)
                          if op_ms > 0 else 0.0)}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return [x for x in ("avx2", "avx512f", "avx512_vnni",
                                        "avx512_bf16", "amx_bf16", "amx_int8")
                            if x in flags]
    except OSError:
        pass
    return []


def machine_class(flags):
    """Which roofline section of --doc a run belongs to: the widest matrix
    unit the CPU has, since that sets the bf16 roof (AMX tiles, AVX512-BF16
    dot products, or f32 arithmetic only)."""
    if "amx_bf16" in flags:
        return "amx"
    if "avx512_bf16" in flags:
        return "avx512-bf16"
    if "avx512f" in flags:
        return "avx512"
    return "avx2"


def table(result):
    lines = [f"{result['cpu']} ({', '.join(result['flags']) or 'no AVX-512'}), "
             f"{result['threads']} threads, OMP_WAIT_POLICY={result['wait']}, "
             f"{result['date']}, load average {result['load']:.1f} at the "
             "start.", "",
             "| roof | measured |", "|---|--:|"]
    for p, peak in result["peaks"].items():
        lines.append(f"| {p} arithmetic (matmul chain) | {peak:.0f} GFLOP/s |")
    lines.append(f"| weight streaming (batch-1 matmul chain) | "
                 f"{result['stream_gbps']:.1f} GB/s |")
    lines += ["", "| model | precision | batch | GFLOP per step | weights (MB) "
              "| GFLOP/s | bound by | fraction of the roofline |",
              "|---|---|--:|--:|--:|--:|---|--:|"]
    for row in result["models"]:
        lines.append(f"| {row['model']} | {row['precision']} | {row['batch']} | "
                     f"{row['flops_per_step'] / 1e9:.2f} | "
                     f"{row['constant_bytes'] / 1e6:.1f} | {row['gflops']:.0f} | "
                     f"{row['bound']} | {100 * row['fraction']:.0f}% |")
    lines += ["", "Produced by `/usr/bin/python3 benchmarks/roofline.py "
              f"--threads {result['threads']} --batches "
              f"{','.join(map(str, result['batches']))} "
              f"--precisions {','.join(result['peaks'])} "
              f"--repeats {result['repeats']} --wait {result['wait']}`; "
              f"raw data: `{result['out']}`."]
    return "\n".join(lines) + "\n"


def roofline(run, peak_gflops, stream_gbps):
    """The run's bound and the fraction of it reached."""
    compute_ms = run["flops_per_step"] / (peak_gflops * 1e6)
    memory_ms = run["constant_bytes"] / (stream_gbps * 1e6)
    bound_ms = max(compute_ms, memory_ms)
    return ("arithmetic" if compute_ms >= memory_ms else "weights",
            bound_ms / run["median_ms"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", default="1,32")
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--precisions", default="f32,bf16,int8",
                   help="f32, bf16 (mixed precision) and int8 (static "
                        "quantization, ranges from random data)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--wait", default="active",
                   help="OMP_WAIT_POLICY of every run (active: threads spin "
                        "between oneDNN calls; run on a quiet machine)")
    p.add_argument("--out")
    p.add_argument("--doc")
    a = p.parse_args()
    global WAIT_POLICY
    WAIT_POLICY = a.wait
    gopt_run = os.path.join(a.build_dir, "bin", "gopt-run")
    if not os.path.isdir(a.models):
        sys.exit(f"roofline: no models directory {a.models} (the reference "
                 "models of make_models.py; give --models DIR)")
    precisions = a.precisions.split(",")
    date = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = a.out or os.path.join("benchmarks", "results", f"roofline-{date}.json")
    batches = [int(b) for b in a.batches.split(",")]
    result = {"cpu": cpu_name(), "flags": cpu_flags(), "threads": a.threads,
              "batches": batches, "repeats": a.repeats, "wait": a.wait,
              "date": date,
              "load": os.getloadavg()[0],
              "peaks": {}, "models": [], "out": out}
    with tempfile.TemporaryDirectory() as tmp:
        chain = os.path.join(tmp, "matmul-chain.mlir")
        with open(chain, "w") as f:
            f.write(matmul_chain(PEAK_WIDTH, PEAK_DEPTH))
        for precision in precisions:
            runs = [run_gopt(gopt_run, chain, precision, PEAK_BATCH, a.threads,
                             3, 10, tmp)["op_gflops"]
                    for _ in range(a.repeats)]
            result["peaks"][precision] = max(runs)
            print(f"peak {precision}: {max(runs):.0f} GFLOP/s", file=sys.stderr)
        stream = os.path.join(tmp, "stream-chain.mlir")
        with open(stream, "w") as f:
            f.write(matmul_chain(STREAM_WIDTH, STREAM_DEPTH))
        weight_bytes = 4 * STREAM_WIDTH * STREAM_WIDTH * STREAM_DEPTH
        runs = [run_gopt(gopt_run, stream, "f32", 1, a.threads, 3, 30)
                for _ in range(a.repeats)]
        result["stream_gbps"] = max(weight_bytes / (r["op_ms"] * 1e6)
                                    for r in runs)
        print(f"weight streaming: {result['stream_gbps']:.1f} GB/s",
              file=sys.stderr)
        # The models run inside the same temporary directory: their static
        # int8 versions are compiled there.
        names = sorted(f[:-5] for f in os.listdir(a.models)
                       if f.endswith(".onnx"))
        for name in names:
            for batch in batches:
                for precision in precisions:
                    # The best of --repeats runs, as for the roofs: on a shared
                    # machine a run only ever loses time to other load.
                    r = min((run_gopt(gopt_run,
                                      os.path.join(a.models, name + ".onnx"),
                                      precision, batch, a.threads, 3,
                                      10 if batch > 1 else 50, tmp)
                             for _ in range(a.repeats)),
                            key=lambda run: run["median_ms"])
                    bound, fraction = roofline(r, result["peaks"][precision],
                                               result["stream_gbps"])
                    r.update(model=name, precision=precision, batch=batch,
                             bound=bound, fraction=fraction)
                    result["models"].append(r)
                    print(f"{name} {precision} batch {batch}: "
                          f"{r['gflops']:.0f} GFLOP/s, {100 * fraction:.0f}% "
                          f"of the roofline ({bound})", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    text = table(result)
    print(text)
    if a.doc:
        with open(a.doc) as f:
            doc = f.read()
        # One section per kind of machine, so that a run on a CPU without
        # AMX does not replace the AMX machine's table (and vice versa).
        key = machine_class(result["flags"])
        begin = f"<!-- roofline:{key}:begin -->"
        end = f"<!-- roofline:{key}:end -->"
        if begin not in doc or end not in doc:
            sys.exit(f"{a.doc} has no {begin} ... {end} markers for this "
                     "machine's section; add them where its table goes")
        head, rest = doc.split(begin, 1)
        with open(a.doc, "w") as f:
            f.write(head + begin + "\n" + text + end + rest.split(end, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
