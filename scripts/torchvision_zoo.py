#!/usr/bin/python3
"""torchvision's model zoo through gopt, checked against PyTorch.

    scripts/torchvision_zoo.py [--build-dir build] [--models LIST]
                               [--out docs/torchvision-zoo.md] [--jobs 1]

Each model is built by Debian's torchvision (0.14) with random weights
(`weights=None`, seeded: nothing is downloaded; parameters torchvision
initializes to zero get small random values, so no output is trivially 0), exported with
`torch.onnx.export` (opset 17, batch 1, 224x224 or the model's own input
size), then imported, optimized (`gopt-run --optimize`, the default CPU
pipeline) and run by gopt on the same input. A model passes when gopt's
output is within --tolerance of PyTorch's, relative to the largest value of
PyTorch's output (random weights give outputs of any scale).

--models takes model names, or the groups `classification`,
`segmentation` and `all` (the default), separated by commas. The script
prints one line per model and, at the end, "N passed, N failed, N
unsupported"; `unsupported` is an import error naming an op or attribute
gopt does not take, `failed` anything else (wrong values, a crash, a
timeout). With --out it writes the table as Markdown. Run it with Debian's
/usr/bin/python3 (python3-torch, python3-torchvision, python3-onnx).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Models that take another input size than 224x224.
INPUT_SIZES = {"inception_v3": 299}
# Classification models that are not image classifiers on 2-D images, or
# need inputs this script does not make.
NOT_IMAGE_CLASSIFIERS = {"raft_large", "raft_small"}


def model_groups():
    from torchvision import models

    classification = sorted(
        name for name in models.list_models(module=models)
        if name not in NOT_IMAGE_CLASSIFIERS)
    segmentation = sorted(models.list_models(module=models.segmentation))
    return {"classification": classification, "segmentation": segmentation}


def expand_models(spec, groups):
    names = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "all":
            names += groups["classification"] + groups["segmentation"]
        elif item in groups:
            names += groups[item]
        else:
            names.append(item)
    return names


def output_only(model):
    """Segmentation models return a dict; export its 'out' entry."""
    import torch

    class OutputOnly(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return OutputOnly(model)


def export(name, segmentation, workdir, dynamic_batch=False):
    import torch
    from torchvision import models

    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    model = models.get_model(name, weights=None, **(
        {"weights_backbone": None} if segmentation else {}))
    # torchvision zero-initializes some layers (ViT's head, the last batch
    # norm of residual branches in some models); with random weights that
    # makes the output all zeros and the comparison meaningless, so those
    # parameters get small random values too.
    with torch.no_grad():
        for param in model.parameters():
            if param.numel() > 1 and not torch.any(param):
                param.normal_(0.0, 0.02, generator=torch.Generator().manual_seed(2))
    if segmentation:
        model = output_only(model)
    model.eval()
    size = INPUT_SIZES.get(name, 224)
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(x)
    path = os.path.join(workdir, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=17,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True,
                      dynamic_axes=({"input": {0: "batch"},
                                     "output": {0: "batch"}}
                                    if dynamic_batch else None))
    np.save(os.path.join(workdir, name + ".input.npy"), x.numpy())
    return path, x.numpy(), expected.numpy()


def first_error(text):
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(no output)"


def classify_error(text):
    # An importer's or the dialect's refusal of something it does not take.
    if re.search(r"unsupported|not supported|does not import|no import rule|"
                 r"is not imported|opset", text):
        return "unsupported"
    return "failed"


def run_model(args, name, groups, workdir):
    segmentation = name in groups["segmentation"]
    start = time.time()
    try:
        path, x, expected = export(name, segmentation, workdir)
    except Exception as e:  # PyTorch's exporter refused the model.
        return "unsupported", "torch.onnx.export: %s" % str(e).splitlines()[0], 0.0
    outdir = os.path.join(workdir, name + ".out")
    os.makedirs(outdir, exist_ok=True)
    cmd = [os.path.join(args.build_dir, "bin", "gopt-run"), path, "--optimize",
           "--input", "input=" + os.path.join(workdir, name + ".input.npy"),
           "--output-dir", outdir, "--warmup", "0", "--iterations", "1"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "failed", "timeout after %d s" % args.timeout, time.time() - start
    if proc.returncode != 0:
        text = proc.stderr + proc.stdout
        if proc.returncode < 0:
            return "failed", "CRASH (signal %d): %s" % (-proc.returncode,
                                                        first_error(text)), 0.0
        return classify_error(text), first_error(text), time.time() - start
    got = np.load(os.path.join(outdir, "output.npy"))
    if got.shape != expected.shape:
        return "failed", "shape %s, PyTorch's is %s" % (got.shape, expected.shape), 0.0
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    err = float(np.max(np.abs(got.astype(np.float64) - expected))) / scale
    status = "passed" if err <= args.tolerance else "failed"
    return status, "max error %.2e of max |output| %.3g" % (err, scale), time.time() - start


def main():
    p = argparse.ArgumentParser(prog="torchvision_zoo.py")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="all")
    p.add_argument("--out", default=None, help="write a Markdown table here")
    p.add_argument("--timeout", type=int, default=600,
                   help="seconds per gopt-run invocation")
    p.add_argument("--time-limit", type=int, default=0,
                   help="stop starting models after this many seconds (0: "
                   "no limit); the rest are listed as not run")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest error relative to max |PyTorch output|")
    p.add_argument("--work", default=None,
                   help="keep the exported models here (default: a temporary directory)")
    args = p.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)

    groups = model_groups()
    names = expand_models(args.models, groups)
    unknown = [n for n in names if n not in groups["classification"] + groups["segmentation"]]
    if unknown:
        print("torchvision_zoo: unknown model(s): %s" % ", ".join(unknown), file=sys.stderr)
        return 2

    workdir = args.work or tempfile.mkdtemp(prefix="gopt-zoo-")
    os.makedirs(workdir, exist_ok=True)
    counts = {"passed": 0, "failed": 0, "unsupported": 0}
    rows = []
    tty = sys.stdout.isatty()
    started = time.time()
    not_run = []
    for i, name in enumerate(names):
        if args.time_limit and time.time() - started > args.time_limit:
            not_run = names[i:]
            break
        if tty:
            print("[%d/%d] %s ..." % (i + 1, len(names), name), end="\r", flush=True)
        status, detail, seconds = run_model(args, name, groups, workdir)
        counts[status] += 1
        rows.append((name, status, detail))
        print("%-8s %-32s %s" % (status.upper() if status == "failed" else status,
                                 name, detail), flush=True)
        # Exported models of the large zoo members are hundreds of MB each.
        if not args.work:
            for f in os.listdir(workdir):
                if f.startswith(name + "."):
                    path = os.path.join(workdir, f)
                    if os.path.isfile(path):
                        os.remove(path)

    if not args.work:
        shutil.rmtree(workdir, ignore_errors=True)
    summary = "%d passed, %d failed, %d unsupported" % (
        counts["passed"], counts["failed"], counts["unsupported"])
    if not_run:
        summary += " (%d not run: time limit)" % len(not_run)
    print(summary)
    if args.out:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        with open(args.out, "w") as f:
            f.write("# torchvision's zoo through gopt\n\n")
            which = ("Every model of" if args.models == "all" else
                     "The %d models below, from" % len(names))
            f.write(which + " Debian's torchvision 0.14 (random weights, seeded), "
                    "exported by `torch.onnx.export` (opset 17, batch 1), run by "
                    "`gopt-run --optimize` on the CPU and compared with PyTorch's output "
                    "(largest error relative to the largest output value, tolerance %g). "
                    "Generated by:\n\n```sh\nscripts/torchvision_zoo.py --models %s --out %s\n```\n\n"
                    % (args.tolerance, args.models, os.path.relpath(args.out, ROOT)))
            f.write("**%s** (gopt %s).\n\n" % (summary, commit))
            f.write("| model | result | detail |\n|---|---|---|\n")
            for name, status, detail in rows:
                f.write("| %s | %s | %s |\n" % (name, status, detail.replace("|", "\\|")))
            for name in not_run:
                f.write("| %s | not run | the sweep's time limit |\n" % name)
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
