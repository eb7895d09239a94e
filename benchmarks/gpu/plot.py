#!/usr/bin/python3
"""Bar chart of benchmarks/gpu/run.py's gpu.json: gopt / PyTorch eager per
model, precision and batch.

  plot.py RESULTS.json OUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        result = json.load(f)
    rows = [r for r in result["rows"] if "ratio" in r]
    configs = sorted({(r["model"], r["precision"]) for r in rows})
    batches = sorted({r["batch"] for r in rows})
    width = 0.8 / len(batches)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for k, batch in enumerate(batches):
        ratios = []
        for model, precision in configs:
            found = [r["ratio"] for r in rows if r["model"] == model and
                     r["precision"] == precision and r["batch"] == batch]
            ratios.append(found[0] if found else 0)
        xs = [i + (k - (len(batches) - 1) / 2) * width for i in range(len(configs))]
        ax.bar(xs, ratios, width, label=f"batch {batch}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"{m}\n{p}" for m, p in configs])
    ax.set_ylabel("gopt / PyTorch eager")
    ax.set_title(f"{result['device']}, PyTorch {result['torch']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
