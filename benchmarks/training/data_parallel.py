#!/usr/bin/python3
"""Data-parallel training throughput: gopt on Gloo against PyTorch DDP on
Gloo, 2 ranks x 1 thread each, on the CPU, one run.

  benchmarks/training/data_parallel.py [--build-dir build] [--steps 20]
                                       [--models DIR] [--out FILE.json]

For the MNIST CNN (batch 64 per rank) and ResNet-18 (batch 16 per rank),
on constant data (the step alone is timed; median step after warm-up):

  gopt, 1 rank        gopt-run MODEL --train --data fake --threads 1
  gopt, 2 ranks       the same with --nproc 2 (Gloo ring all-reduce)
  PyTorch DDP, 2      torch.nn.parallel.DistributedDataParallel, backend
                      gloo, 2 processes with torch.set_num_threads(1) (the
                      same networks as run.py; skipped, saying so, when
                      torch is not installed)

Prints a table with global samples/s, gopt's scaling efficiency (2 ranks
against twice 1 rank) and gopt / DDP. A benchmark, not a test.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")

# One DDP rank: constant data, Adam, the median step; rank 0 prints JSON.
TORCH_DDP = r"""
import json, os, sys, time, torch, torch.nn as nn, torch.distributed as dist
sys.path.insert(0, sys.argv[5])
model_name, batch, steps, rank = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(1)
dist.init_process_group("gloo", rank=rank, world_size=2)
if model_name == "mnist_cnn":
    import torch_mnist
    model = torch_mnist.make_model(dropout=False)
    x = torch.full((batch, 1, 28, 28), 0.5)
    y = torch.arange(batch) % 10
else:
    import torchvision
    model = torchvision.models.resnet18(norm_layer=lambda c: nn.Identity())
    x = torch.full((batch, 3, 224, 224), 0.5)
    y = torch.arange(batch) % 1000
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
times = []
for step in range(3 + steps):
    start = time.perf_counter()
    loss = nn.functional.cross_entropy(ddp(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step >= 3:
        times.append(time.perf_counter() - start)
m = sorted(times)[len(times) // 2]
if rank == 0:
    print(json.dumps({"samples_per_s": 2 * batch / m}))
dist.destroy_process_group()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gopt_time(gopt_run, model, batch, steps, nproc):
    cmd = [gopt_run, model, "--train", "--data", "fake", "--batch", str(batch),
           "--steps", str(steps + 3), "--threads", "1", "--log-every",
           "1000000"]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"gopt-run failed: {r.stderr.strip()}")
    m = re.search(r"step time \(median after \d+ warm-up steps\): [0-9.]+ ms "
                  r"= ([0-9.]+) samples/s", r.stdout)
    a = re.search(r"all-reduce \(gloo, \d+ ranks\): (.*)", r.stdout)
    return float(m.group(1)), a.group(1) if a else ""


def ddp_time(name, batch, steps):
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    procs = [subprocess.Popen([sys.executable, "-c", TORCH_DDP, name,
                               str(batch), str(steps), str(r), HERE],
                              env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=3600) for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(f"DDP failed: {outs[0][1][-500:]}{outs[1][1][-500:]}")
    return json.loads(outs[0][0].strip().splitlines()[-1])["samples_per_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--models", default=SHARED,
                   help="where mnist_cnn.onnx and resnet18.onnx are")
    p.add_argument("--out")
    args = p.parse_args()
    gopt_run = os.path.join(args.build_dir, "bin", "gopt-run")
    rows = []
    for name, batch in [("mnist_cnn", 64), ("resnet18", 16)]:
        model = os.path.join(args.models, name + ".onnx")
        one, _ = gopt_time(gopt_run, model, batch, args.steps, 1)
        two, allreduce = gopt_time(gopt_run, model, batch, args.steps, 2)
        ddp = ddp_time(name, batch, args.steps)
        rows.append({"model": name, "batch_per_rank": batch,
                     "gopt_1_rank": one, "gopt_2_ranks": two,
                     "efficiency": two / (2 * one), "ddp_2_ranks": ddp,
                     "allreduce": allreduce})
        print(f"{name}: {rows[-1]}", file=sys.stderr, flush=True)
    print("| model | batch per rank | gopt 1 rank | gopt 2 ranks | scaling "
          "efficiency | PyTorch DDP 2 ranks | gopt / DDP |")
    print("|---|---|---|---|---|---|---|")
    def rate(x):
        return f"{x:.0f}" if x >= 100 else f"{x:.1f}"
    for r in rows:
        ddp = r["ddp_2_ranks"]
        print(f"| {r['model']} | {r['batch_per_rank']} | {rate(r['gopt_1_rank'])} "
              f"| {rate(r['gopt_2_ranks'])} | {100 * r['efficiency']:.0f}% | "
              + (f"{rate(ddp)} | **{r['gopt_2_ranks'] / ddp:.2f}x** |" if ddp
                 else "not installed (python3-torch) | — |"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
