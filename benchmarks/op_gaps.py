#!/usr/bin/python3
"""Where gopt and ONNX Runtime spend a model's step, op by op.

  benchmarks/op_gaps.py MODEL.onnx [--gopt-run build/bin/gopt-run]
                        [--input NAME=FILE.npy]
                        [--batch 1] [--threads 1] [--rounds 3]
                        [--iterations 10] [--top 15] [--json OUT.json]

Runs `gopt-run MODEL --optimize --json` and ONNX Runtime's own session
profiler (scripts/ort_run.js --profile) in interleaved rounds on the same
input, takes each op's least time in one run over all runs (gopt's
`min_run_ms`, ONNX Runtime's per-node minimum: the figures least disturbed
by other load), and pairs the two profiles by the model's compute nodes.
Both runtimes fuse: gopt names a fused row by its first node (a Conv, MatMul
or Gemm), ONNX Runtime by the last one's output (a Relu, an Add). Every row
is therefore charged to its anchor: the node itself, or, walking back from an
elementwise node along the input a compute node produced, the first compute
node. Prints the totals by op type of each side and the anchors where gopt
is furthest behind (and ahead). A benchmark, not a test of speed; run with
Debian's /usr/bin/python3 on a quiet machine, or one thread pinned to a
core when others are busy.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Ops a runtime folds into the compute op before them; the walk back to an
# anchor passes through them.
ELEMENTWISE = {"Relu", "Clip", "Add", "Sum", "Mul", "Sub", "Div", "Sigmoid",
               "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu",
               "BatchNormalization", "LeakyRelu", "PRelu", "Identity",
               "Cast", "QuantizeLinear", "DequantizeLinear"}


def progress(text):
    if sys.stderr.isatty():
        print(text, file=sys.stderr, flush=True)


class Graph:
    """The ONNX graph's nodes by name and by output, and each one's anchor."""

    def __init__(self, path):
        import onnx  # Debian's python3-onnx

        model = onnx.load(path, load_external_data=False)
        self.nodes = {}
        self.producer = {}
        for i, node in enumerate(model.graph.node):
            name = node.name or "%s_%d" % (node.op_type, i)
            self.nodes[name] = node
            for out in node.output:
                self.producer[out] = name

    def anchor(self, name):
        seen = set()
        while name in self.nodes and name not in seen:
            seen.add(name)
            node = self.nodes[name]
            if node.op_type not in ELEMENTWISE:
                return name
            sources = [self.producer[i] for i in node.input
                       if i in self.producer]
            if not sources:
                return name
            compute = [s for s in sources
                       if self.nodes[s].op_type not in ELEMENTWISE]
            name = (compute or sources)[0]
        return name

    def node_of_ort_row(self, row):
        """ONNX Runtime names a row by its node, a fused node by "fused "
        and the first node, an NCHWc node by its output tensor and
        "_nchwc"."""
        if row.startswith("fused "):
            row = row[len("fused "):]
        for suffix in ("_nchwc", ""):
            base = row[:-len(suffix)] if suffix and row.endswith(suffix) \
                else row
            if base in self.nodes:
                return base
            if base in self.producer:
                return self.producer[base]
        return None

    def op_type(self, name):
        return self.nodes[name].op_type if name in self.nodes else "?"


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("%s failed:\n%s" % (" ".join(cmd[:2]),
                                             out.stderr[-2000:]))


def gopt_round(args, tmp):
    report = os.path.join(tmp, "gopt.json")
    cmd = [args.gopt_run, args.model,
           "--optimize", "--batch", str(args.batch), "--threads",
           str(args.threads), "--warmup", "2", "--iterations",
           str(args.iterations), "--json", report]
    if args.input:
        cmd += ["--input", args.input]
    run(cmd)
    with open(report) as f:
        return {(op["name"], op["kind"]): op.get("min_run_ms", op["mean_ms"])
                for op in json.load(f)["ops"]}


def ort_round(args, tmp):
    report = os.path.join(tmp, "ort.json")
    cmd = ["node", os.path.join(ROOT, "scripts", "ort_run.js"), args.model,
           "--threads", str(args.threads), "--warmup", "2", "--iterations",
           str(args.iterations), "--profile", report]
    if args.input:
        cmd += ["--input", args.input]
    run(cmd)
    with open(report) as f:
        return {name: (v["ms"], v["op"])
                for name, v in json.load(f)["nodes"].items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--gopt-run",
                   default=os.path.join(ROOT, "build", "bin", "gopt-run"))
    p.add_argument("--input", help="NAME=FILE.npy (ONNX Runtime needs one; "
                   "default MODEL's .input.npy beside it, named after the "
                   "graph's first input)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", help="write the paired table here")
    args = p.parse_args()
    graph = Graph(args.model)
    if not args.input:
        import onnx
        first = onnx.load(args.model, load_external_data=False).graph.input[0]
        npy = os.path.splitext(args.model)[0] + ".input.npy"
        if not os.path.exists(npy):
            p.error("no --input and no %s" % npy)
        args.input = "%s=%s" % (first.name, npy)

    gopt_best = collections.defaultdict(lambda: float("inf"))
    ort_best = collections.defaultdict(lambda: float("inf"))
    ort_types = {}  # also ONNX Runtime's execution order (first round's)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            progress("round %d of %d: gopt" % (r + 1, args.rounds))
            for key, ms in gopt_round(args, tmp).items():
                gopt_best[key] = min(gopt_best[key], ms)
            progress("round %d of %d: ONNX Runtime" % (r + 1, args.rounds))
            for name, (ms, op) in ort_round(args, tmp).items():
                ort_best[name] = min(ort_best[name], ms)
                ort_types[name] = op

    # Per anchor: gopt's ms, ONNX Runtime's ms, and each side's row count.
    by_anchor = collections.defaultdict(lambda: [0.0, 0.0, 0, 0])
    gopt_kinds, ort_kinds = collections.Counter(), collections.Counter()
    unmatched = [0.0, 0.0]
    # ONNX Runtime's rows named after no node of the graph (its BiasGelu,
    # ReorderInput/Output): charged to the row before them in execution
    # order (the MatMul or Conv they follow).
    after_previous = 0.0
    previous = None
    for (name, kind), ms in gopt_best.items():
        gopt_kinds[kind] += ms
        first = name.split("+")[0]
        if first in graph.nodes:
            row = by_anchor[graph.anchor(first)]
            row[0] += ms
            row[2] += 1
        else:
            unmatched[0] += ms
    for name in ort_types:
        ms = ort_best[name]
        ort_kinds[ort_types[name]] += ms
        node = graph.node_of_ort_row(name)
        if node:
            previous = graph.anchor(node)
            row = by_anchor[previous]
            row[1] += ms
            row[3] += 1
        elif previous:
            by_anchor[previous][1] += ms
            after_previous += ms
        else:
            unmatched[1] += ms

    total = [sum(gopt_best.values()), sum(ort_best.values())]
    print("%s, batch %d, %d thread(s), each op's least time over %d rounds" %
          (os.path.basename(args.model), args.batch, args.threads,
           args.rounds))
    print("sum of ops: gopt %.2f ms, ONNX Runtime %.2f ms (%.2fx); not "
          "paired with a node: gopt %.2f, ONNX Runtime %.2f ms (and %.2f ms "
          "charged to the row before)" %
          (total[0], total[1], total[1] / total[0] if total[0] else 0,
           unmatched[0], unmatched[1], after_previous))
    print("\ngopt by kind:  " + ", ".join(
        "%s %.2f" % kv for kv in gopt_kinds.most_common(8)))
    print("ONNX Runtime by op: " + ", ".join(
        "%s %.2f" % kv for kv in ort_kinds.most_common(8)))
    rows = sorted(by_anchor.items(), key=lambda kv: kv[1][1] - kv[1][0])
    header = "\n%-9s %9s %9s %8s  %s" % ("gopt ms", "ORT ms", "gap ms",
                                          "op", "anchor node")
    print("\nwhere gopt is furthest behind:" + header)
    for name, (g, o, _, _) in rows[:args.top]:
        if g > o:
            print("%9.3f %9.3f %+9.3f %8s  %s" % (g, o, o - g,
                                                   graph.op_type(name), name))
    print("\nwhere gopt is furthest ahead:" + header)
    for name, (g, o, _, _) in reversed(rows[-args.top:]):
        if o > g:
            print("%9.3f %9.3f %+9.3f %8s  %s" % (g, o, o - g,
                                                   graph.op_type(name), name))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "batch": args.batch,
                       "threads": args.threads, "rounds": args.rounds,
                       "sum_ms": {"gopt": total[0], "ort": total[1]},
                       "unpaired_ms": {"gopt": unmatched[0],
                                       "ort": unmatched[1]},
                       "anchors": {n: {"gopt_ms": g, "ort_ms": o,
                                       "gopt_rows": gr, "ort_rows": orr,
                                       "op": graph.op_type(n)}
                                   for n, (g, o, gr, orr) in
                                   by_anchor.items()}},
                      f, indent=1)


if __name__ == "__main__":
    main()
