#!/usr/bin/python3
"""The seed's layout + batch-norm experiment, reproduced with gopt on the CPU.

  benchmarks/layout_bn/run.py [--build-dir build] [--batches 1,32]
                              [--threads 2] [--repeats 3] [--graphs PATH,...]
                              [--out benchmarks/results/layout_bn-DATE.json]

TensorFlow 1.x users wrote NHWC graphs with unfused batch norm (Mean,
SquaredDifference, Rsqrt, Mul, Sub, Add) and debug ops; TensorFlow's guide
told them to convert to NCHW and fuse batch norm by hand. gopt does it with
one pipeline. For each such graph and batch size, this times in one run,
interleaved (A B C A B C):

  nhwc-unfused  gopt-run GRAPH                      (the graph as written)
  optimized     gopt-run GRAPH --pipeline 'builtin.module(gopt-optimize{target=cpu})'
  ort           ONNX Runtime (opt=all) on the same NHWC, unfused graph,
                exported with gopt-translate --export-onnx, when the
                exporter can write it

and reports the speed-up optimized / nhwc-unfused per graph and batch, and
both gopt variants / ONNX Runtime. It checks first that the optimized graph
computes what the original does (gopt-run --compare, reference backend).

Graphs (the first that exist are used unless --graphs): the TF-style NHWC
ResNet GraphDefs under test/Transforms/Inputs (scripts/make_tf_resnet.py),
test/Import/Inputs/resnet_block_nhwc.pb and
examples/graphs/resnet_block_nhwc.mlir. Writes the JSON and a Markdown table
beside it, and the README's layout_bn table (between the layout_bn markers of
the Benchmarks section) unless --no-readme. A benchmark, not a test.
"""
import argparse
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import run_cpu  # noqa: E402  (machine_info, loadavg, OPT_PIPELINE)
import report  # noqa: E402  (replace_block)

BEGIN, END = "<!-- layout_bn:begin -->", "<!-- layout_bn:end -->"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def default_graphs():
    found = []
    for pat in ("test/Transforms/Inputs/*resnet*nhwc*.pb", "test/Transforms/Inputs/*resnet*nhwc*.pbtxt",
                "test/Transforms/Inputs/*resnet*.pb", "test/Transforms/Inputs/*resnet*.pbtxt"):
        for f in sorted(glob.glob(os.path.join(ROOT, pat))):
            # A .pb and its .pbtxt twin are the same graph: keep one.
            stem = os.path.splitext(f)[0]
            if not any(os.path.splitext(g)[0] == stem for g in found):
                found.append(f)
    for f in ("test/Import/Inputs/resnet_block_nhwc.pb", "examples/graphs/resnet_block_nhwc.mlir"):
        if os.path.exists(os.path.join(ROOT, f)):
            found.append(os.path.join(ROOT, f))
    return found


def op_counts(gopt_opt, graph, pipeline, timeout):
    """Op kinds in the graph before and after the pipeline (gopt-opt);
    None when gopt-opt fails, "timeout" when the pipeline does not finish."""
    cmd = [gopt_opt, graph]
    if pipeline:
        cmd += ["--pass-pipeline=" + pipeline]
    try:
        r = sh(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if r.returncode != 0:
        return None
    counts = {}
    for m in re.finditer(r"= (gopt\.[a-z_0-9]+)", r.stdout):
        k = m.group(1)[5:]
        if k != "constant":
            counts[k] = counts.get(k, 0) + 1
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--graphs", default=None, help="comma-separated graph files")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=None,
                   help="timed iterations (default: 50 at batch 1, 10 at larger batches)")
    p.add_argument("--peers-dir", default=os.path.join(BENCH, ".peers"))
    p.add_argument("--peers-scripts", default=os.path.join(ROOT, "..", "shared", "peers"))
    p.add_argument("--compile-timeout", type=int, default=120,
                   help="seconds gopt-opt may take for the pipeline before the graph's optimized variant is skipped")
    p.add_argument("--out", default=None)
    p.add_argument("--no-readme", action="store_true")
    a = p.parse_args()
    build = a.build_dir if os.path.isabs(a.build_dir) else os.path.join(ROOT, a.build_dir)
    gopt_run = os.path.join(build, "bin", "gopt-run")
    gopt_opt = os.path.join(build, "bin", "gopt-opt")
    translate = os.path.join(build, "bin", "gopt-translate")
    if not os.path.exists(gopt_run):
        log(f"layout_bn: {gopt_run} not found: build gopt or pass --build-dir")
        return 1
    pipeline = run_cpu.OPT_PIPELINE
    work = os.path.join(BENCH, "work", "layout_bn")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, ORT_NODE_MODULE=os.path.join(a.peers_dir, "node_modules", "onnxruntime-node"))
    have_ort = os.path.isdir(env["ORT_NODE_MODULE"]) and os.path.exists(
        os.path.join(a.peers_scripts, "ort_bench.js"))

    graphs = [g if os.path.isabs(g) else os.path.join(ROOT, g)
              for g in (a.graphs.split(",") if a.graphs else default_graphs())]
    batches = [int(b) for b in a.batches.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"kind": "gopt-layout-bn-benchmark", "started": started.isoformat(timespec="seconds"),
              "command": "benchmarks/layout_bn/run.py " + " ".join(sys.argv[1:]),
              "threads": a.threads, "repeats": a.repeats, "pipeline": pipeline,
              "machine": run_cpu.machine_info(), "loadavg_start": run_cpu.loadavg(),
              "graphs": [], "runs": []}
    r = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    result["gopt_commit"] = r.stdout.strip()

    for g in graphs:
        name = os.path.relpath(g, ROOT)
        info = {"graph": name, "ops_before": op_counts(gopt_opt, g, "", a.compile_timeout),
                "ops_after": op_counts(gopt_opt, g, pipeline, a.compile_timeout)}
        if info["ops_after"] == "timeout":
            info["ops_after"] = None
            info["pipeline_timeout"] = True
            info["compare"] = (f"the pipeline did not finish within {a.compile_timeout} s "
                               "(gopt-opt): optimized variant not timed")
            info["compare_ok"] = False
            log(f"layout_bn: {name}: {info['compare']}")
        # Numbers first: the optimized graph must compute what the original does.
        if not info.get("pipeline_timeout"):
            r = sh([gopt_run, g, "--pipeline", pipeline, "--compare", g, "--batch", "2",
                    "--rtol", "1e-4", "--atol", "1e-4"])
            info["compare"] = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-300:]
            info["compare_ok"] = r.returncode == 0
        # An ONNX form of the same NHWC, unfused graph for ONNX Runtime.
        onnx_path = os.path.join(work, os.path.basename(os.path.splitext(g)[0]) + ".onnx")
        info["onnx"] = None
        if have_ort:
            src = g
            if not g.endswith(".mlir"):
                src = os.path.join(work, os.path.basename(os.path.splitext(g)[0]) + ".mlir")
                fmt = "--import-graphdef" if re.search(r"\.pb(txt)?$", g) else "--import-onnx"
                r = sh([translate, fmt, g, "-o", src])
                if r.returncode != 0:
                    info["onnx_error"] = r.stderr.strip()[-300:]
                    src = None
            if src:
                r = sh([translate, "--export-onnx", src, "-o", onnx_path])
                if r.returncode == 0:
                    info["onnx"] = onnx_path
                else:
                    info["onnx_error"] = r.stderr.strip()[-300:]
        log(f"layout_bn: {name}: compare {info['compare']}; ops {info['ops_before']} -> "
            f"{info['ops_after']}; onnx {'yes' if info['onnx'] else info.get('onnx_error', 'no')}")
        result["graphs"].append(info)
        if not info["compare_ok"]:
            log(f"layout_bn: {name}: the optimized graph does not match the original: timed anyway")

        for batch in batches:
            iters = a.iterations or (50 if batch == 1 else 10)
            contestants = (["nhwc-unfused"] + ([] if info.get("pipeline_timeout") else ["optimized"])
                           + (["ort"] if info["onnx"] else []))
            for rep in range(a.repeats):
                for c in contestants:
                    la = run_cpu.loadavg()[0]
                    if c == "ort":
                        cmd = ["node", os.path.join(a.peers_scripts, "ort_bench.js"), info["onnx"],
                               "--batch", str(batch), "--threads", str(a.threads),
                               "--warmup", str(a.warmup), "--iterations", str(iters), "--opt", "all"]
                        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
                        res = run_cpu.last_json_line(r.stdout) if r.returncode == 0 else None
                    else:
                        out = os.path.join(work, "run.json")
                        cmd = [gopt_run, g, "--threads", str(a.threads), "--batch", str(batch),
                               "--warmup", str(a.warmup), "--iterations", str(iters), "--json", out]
                        if c == "optimized":
                            cmd += ["--pipeline", pipeline]
                        try:
                            r = sh(cmd)
                            res = json.load(open(out)) if r.returncode == 0 else None
                        except subprocess.TimeoutExpired:
                            r = subprocess.CompletedProcess(cmd, 124, "", "timed out after 600 s")
                            res = None
                    run = {"graph": name, "batch": batch, "contestant": c, "repeat": rep,
                           "iterations": iters, "loadavg_1min": la}
                    if res:
                        run.update({k: res.get(k) for k in ("median_ms", "p90_ms", "min_ms", "throughput_per_s")})
                        log(f"  {name} b{batch} {c} #{rep}: {run['throughput_per_s']:.1f}/s")
                    else:
                        run["error"] = (r.stderr.strip() or r.stdout.strip())[-300:]
                        log(f"  {name} b{batch} {c} #{rep}: FAILED {run['error'][-150:]}")
                    result["runs"].append(run)

    result["loadavg_end"] = run_cpu.loadavg()
    summary = []
    for g in result["graphs"]:
        for batch in batches:
            tp = {}
            for c in ("nhwc-unfused", "optimized", "ort"):
                v = [r["throughput_per_s"] for r in result["runs"]
                     if r["graph"] == g["graph"] and r["batch"] == batch and r["contestant"] == c
                     and r.get("throughput_per_s")]
                if v:
                    tp[c] = statistics.median(v)
            row = {"graph": g["graph"], "batch": batch, "throughput_per_s": tp}
            if "optimized" in tp and "nhwc-unfused" in tp:
                row["speedup"] = tp["optimized"] / tp["nhwc-unfused"]
            if "ort" in tp:
                for c in ("optimized", "nhwc-unfused"):
                    if c in tp:
                        row[f"{c}/ort"] = tp[c] / tp["ort"]
            summary.append(row)
    result["summary"] = summary
    out = a.out or os.path.join(BENCH, "results", f"layout_bn-{started.strftime('%Y-%m-%d-%H%M')}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    md = table(result, os.path.relpath(out, ROOT))
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write(md)
    print(md)
    if not a.no_readme:
        readme = os.path.join(ROOT, "README.md")
        text = open(readme).read()
        block = f"{BEGIN}\n{md}\n{END}"
        if BEGIN in text:
            text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: block, text, flags=re.S)
        else:
            text = text.rstrip("\n") + "\n\n" + block + "\n"
        with open(readme, "w") as f:
            f.write(text)
        log("layout_bn: updated README.md")
    return 0


def fmt(v, suffix="x"):
    return "–" if v is None else f"{v:.2f}{suffix}"


def table(r, rel_json):
    L = ["### Layout and batch-norm rewrites", "",
         "The TF 1.x-style graph (NHWC, batch norm decomposed into primitives, debug ops) timed "
         f"as written and after `--pipeline '{r['pipeline']}'` (NCHW, batch norm fused and folded, "
         "conv + bias + activation fused), in one run, interleaved, median of "
         f"{r['repeats']} repeats, {r['threads']} threads. Produced by:", "",
         "```sh", "/usr/bin/python3 " + r["command"], "```", "",
         "| graph | batch | speed-up optimized / as written | optimized / ONNX Runtime | "
         "as written / ONNX Runtime | as written samples/s | optimized samples/s |",
         "|---|--:|--:|--:|--:|--:|--:|"]
    for row in r["summary"]:
        tp = row["throughput_per_s"]
        L.append(f"| `{row['graph']}` | {row['batch']} | {fmt(row.get('speedup'))} | "
                 f"{fmt(row.get('optimized/ort'))} | {fmt(row.get('nhwc-unfused/ort'))} | "
                 f"{report.fmt_tp(tp.get('nhwc-unfused'))} | {report.fmt_tp(tp.get('optimized'))} |")
    L.append("")
    for g in r["graphs"]:
        before, after = g.get("ops_before") or {}, g.get("ops_after") or {}
        if g.get("pipeline_timeout"):
            L.append(f"- `{g['graph']}`: {sum(before.values())} ops ({', '.join(f'{k} {v}' for k, v in sorted(before.items()))}); "
                     + g["compare"])
            continue
        short = lambda d: ", ".join(f"{k} {v}" for k, v in sorted(d.items()))
        L.append(f"- `{g['graph']}`: {sum(before.values())} ops ({short(before)}) → "
                 f"{sum(after.values())} ({short(after)}); optimized vs. original: {g['compare']}"
                 + ("" if g.get("onnx") else "; no ONNX Runtime column: "
                    + (g.get("onnx_error", "no ONNX form").splitlines()[-1][:160] if g.get("onnx_error") else "no ONNX form")))
    la = [x["loadavg_1min"] for x in r["runs"]]
    m = r["machine"]
    L += ["", f"Machine: {m.get('cpu_model')}, load average (1 min) {min(la):.1f}–{max(la):.1f} during the runs; "
          f"gopt {r['gopt_commit']}. Raw data: [{os.path.basename(rel_json)}]({rel_json}).", ""]
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
