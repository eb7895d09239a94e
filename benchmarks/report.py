#!/usr/bin/python3
"""Turn a benchmarks/run_cpu.py result into tables and a plot.

  benchmarks/report.py RESULT.json [--no-readme] [--no-plot]

Writes RESULT.md (beside the JSON), replaces the table between the
`benchmarks:begin`/`benchmarks:end` markers of README.md's "Benchmarks"
section and of docs/benchmarks.md, and draws docs/benchmarks.png
(python3-matplotlib). Nothing else in those files is touched.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"
PEERS = [("ort", "ONNX Runtime"), ("torch-jit", "PyTorch jit"), ("torch", "PyTorch eager")]


def fmt_tp(v):
    if v is None:
        return "–"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def fmt_ratio(v, bold_below=None):
    if v is None:
        return "–"
    s = f"{v:.2f}x"
    return s


def best_gopt(tp):
    return "gopt-opt" if "gopt-opt" in tp else "gopt"


def machine_line(r):
    m = r["machine"]
    amx = ", ".join(m.get("amx_flags") or []) or "none"
    avx512 = ", ".join(m.get("avx512_flags") or []) or "none"
    return (f"{m.get('cpu_model', '?')}, {m.get('nproc')} CPUs; AVX2 "
            f"{'yes' if m.get('avx2') else 'no'}; AVX-512 flags: {avx512}; AMX flags: {amx}")


def table(r):
    tpkey = lambda row: row["throughput_per_s"]
    lines = []
    has_opt = any("gopt-opt" in row["throughput_per_s"] for row in r["summary"])
    g = "gopt-opt" if has_opt else "gopt"
    gname = "gopt (optimized)" if has_opt else "gopt"
    head = ["model", "batch", f"{gname} / ONNX Runtime", f"{gname} / PyTorch jit",
            f"{gname} / PyTorch eager"]
    if has_opt:
        head += ["gopt unoptimized / ONNX Runtime", "optimized / unoptimized"]
    has_passive = any("gopt-opt-passive" in row["throughput_per_s"] for row in r["summary"])
    if has_passive:
        head += ["optimized, passive OMP / ONNX Runtime", "optimized, passive OMP / PyTorch jit, passive OMP"]
    head += ["gopt samples/s", "ONNX Runtime samples/s", "PyTorch jit samples/s"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] * 2 + ["--:"] * (len(head) - 2)) + "|")
    for row in r["summary"]:
        tp, ratio = row["throughput_per_s"], row["ratio"]
        cells = [row["model"], str(row["batch"]),
                 fmt_ratio(ratio.get(f"{g}/ort")), fmt_ratio(ratio.get(f"{g}/torch-jit")),
                 fmt_ratio(ratio.get(f"{g}/torch"))]
        if has_opt:
            cells += [fmt_ratio(ratio.get("gopt/ort")), fmt_ratio(ratio.get("gopt-opt/gopt"))]
        if has_passive:
            cells += [fmt_ratio(ratio.get("gopt-opt-passive/ort")),
                      fmt_ratio(ratio.get("gopt-opt-passive/torch-jit-passive"))]
        cells += [fmt_tp(tp.get(g)), fmt_tp(tp.get("ort")), fmt_tp(tp.get("torch-jit"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def failures(r):
    out = []
    seen = set()
    for run in r["runs"]:
        if "error" in run:
            key = (run["model"], run["batch"], run["contestant"])
            if key not in seen:
                seen.add(key)
                msg = run["error"].strip().splitlines()[-1] if run["error"].strip() else "?"
                out.append(f"- {run['model']} batch {run['batch']} {run['contestant']}: {msg[:200]}")
    return out


def checks(r):
    out = []
    for key, c in sorted(r.get("checks", {}).items()):
        if c.get("status") == "ok":
            out.append(f"- {key}: ok (max rel. error {c['max_rel_err']:.2g})")
        else:
            out.append(f"- {key}: {c.get('status')}"
                       + (f" (max rel. error {c['max_rel_err']:.2g})" if "max_rel_err" in c else "")
                       + (f": {c['message'].splitlines()[-1][:200]}" if c.get("message") else ""))
    return out


def wait_line(r):
    """How gopt's OpenMP threads waited between ops in the runs, as gopt-run
    reported it (passive, chosen on a busy machine, pays a thread wake-up per
    op: a run's ratio is read differently then). Empty for results recorded
    before gopt-run reported it."""
    names = {"default": "libgomp's default (a short spin, then sleep)"}
    waits = [names.get(w, w) for w in (
        run["omp_wait"].split(" (")[0] for run in r["runs"]
        if run.get("contestant", "").startswith("gopt") and run.get("omp_wait"))]
    if not waits:
        return ""
    counts = {w: waits.count(w) for w in sorted(set(waits))}
    return ("gopt's OpenMP wait policy: "
            + ", ".join(f"{w} in {n} of {len(waits)} runs" for w, n in counts.items()) + ". ")


def section(r, json_rel, png_rel, heading):
    la0, la1 = r.get("loadavg_start"), r.get("loadavg_end")
    loads = [run["loadavg_1min"] for run in r["runs"] if "loadavg_1min" in run]
    parts = [heading, "",
             "Throughput ratios, gopt / peer, on the CPU with "
             f"{r['threads']} threads (median of {r['repeats']} interleaved repeats; "
             "> 1 means gopt is faster). Produced by:", "",
             "```sh", r["command"].replace("benchmarks/run_cpu.py", "/usr/bin/python3 benchmarks/run_cpu.py", 1), "```", "",
             table(r), "",
             f"Machine: {machine_line(r)}. Load average (1 min) {la0[0] if la0 else '?'} at the start, "
             f"{la1[0] if la1 else '?'} at the end, {min(loads):.1f}–{max(loads):.1f} during the runs "
             "(a shared machine: other jobs ran beside the benchmark, so compare ratios from one run, "
             "not absolute numbers across runs). "
             f"Peers: onnxruntime-node {r['versions'].get('onnxruntime_node')} (graph optimization 'all'), "
             f"torch {r['versions'].get('torch')} (Debian, OpenBLAS); gopt {r['versions'].get('gopt_commit')}"
             + (" with uncommitted changes in the work tree" if r['versions'].get('gopt_worktree_modified') else "")
             + (f", optimized with `--pipeline '{r['pipeline']}'`" if r.get("pipeline") else "")
             + f". {wait_line(r)}"
             + f"Raw data: [{os.path.basename(json_rel)}]({json_rel}).", ""]
    if png_rel:
        parts += [f"![gopt / peer throughput ratios]({png_rel})", ""]
    f = failures(r)
    if f:
        parts += ["Runs that failed (no ratio):", ""] + f + [""]
    return "\n".join(parts)


def replace_block(path, block, heading_if_new):
    text = open(path).read() if os.path.exists(path) else ""
    new = f"{BEGIN}\n{block}\n{END}"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: new, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + heading_if_new + "\n\n" + new + "\n"
    with open(path, "w") as f:
        f.write(text)


def plot(r, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = r["summary"]
    has_opt = any("gopt-opt" in row["throughput_per_s"] for row in rows)
    g = "gopt-opt" if has_opt else "gopt"
    labels = [f"{row['model']}\nbatch {row['batch']}" for row in rows]
    series = [(f"{g}/{p}", f"vs. {name}") for p, name in PEERS]
    if has_opt:
        series.insert(1, ("gopt/ort", "unoptimized vs. ONNX Runtime"))
    if any("gopt-opt-passive" in row["throughput_per_s"] for row in rows):
        series.insert(1, ("gopt-opt-passive/ort", "OMP_WAIT_POLICY=passive vs. ONNX Runtime"))
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(rows) + 2), 4.5))
    width = 0.8 / len(series)
    for i, (key, name) in enumerate(series):
        vals = [row["ratio"].get(key, float("nan")) for row in rows]
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, vals, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("throughput ratio gopt / peer (log)")
    ax.set_title(f"gopt{' (optimized)' if has_opt else ''} / peer, CPU, {r['threads']} threads "
                 f"({r['machine'].get('cpu_model', '')}, {r['started'][:10]})",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("result")
    p.add_argument("--no-readme", action="store_true")
    p.add_argument("--no-plot", action="store_true")
    a = p.parse_args()
    with open(a.result) as f:
        r = json.load(f)
    json_path = os.path.abspath(a.result)
    md_path = os.path.splitext(json_path)[0] + ".md"
    with open(md_path, "w") as f:
        f.write(section(r, os.path.basename(json_path), None, f"# CPU benchmark {r['started']}"))
        ck = checks(r)
        if ck:
            f.write("\ngopt's outputs vs. PyTorch's (NAME.output.npy, batch 2, rtol 1e-4):\n\n"
                    + "\n".join(ck) + "\n")
    print(f"report: wrote {md_path}")
    png = os.path.join(ROOT, "docs", "benchmarks.png")
    if not a.no_plot:
        plot(r, png)
        print(f"report: wrote {png}")
    if not a.no_readme:
        rel_readme = os.path.relpath(json_path, ROOT)
        block = section(r, rel_readme, "docs/benchmarks.png",
                        "").lstrip("\n")
        block += ("\nWhere gopt falls short and why (per-op profiles): "
                  "[docs/benchmarks.md](docs/benchmarks.md). How to run: "
                  "[benchmarks/README.md](benchmarks/README.md).\n")
        replace_block(os.path.join(ROOT, "README.md"), block, "## Benchmarks")
        rel_docs = os.path.relpath(json_path, os.path.join(ROOT, "docs"))
        replace_block(os.path.join(ROOT, "docs", "benchmarks.md"),
                      section(r, rel_docs, "benchmarks.png", "").lstrip("\n"),
                      "## Latest run")
        print("report: updated README.md (Benchmarks) and docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
