#!/usr/bin/python3
"""Data-parallel training of the MNIST CNN in gopt and in PyTorch DDP, both
on Gloo with 2 ranks, from the same weights (mnist_cnn.onnx) on the same
Fashion-MNIST shards (no shuffling: rank r takes examples r, r+2, ..., as
DistributedSampler(shuffle=False) does): after --steps steps the
parameters must agree within --atol + --rtol * |DDP's|.

  compare_ddp.py --gopt-run build/bin/gopt-run --onnx mnist_cnn.onnx
                 [--optimizer sgd|adam] [--lr X] [--momentum X]
                 [--steps 10] [--batch 32] [--work DIR]

Exit status 0 when they agree, 1 otherwise. Needs Debian's python3-torch.
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def ddp_rank(args):
    """One DDP rank: args.rank of 2; rank 0 saves the parameters."""
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    sys.path.insert(0, HERE)
    import torch_mnist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=args.rank, world_size=2)
    model = torch_mnist.make_model(dropout=False)
    names = torch_mnist.load_onnx_weights(model, args.onnx)
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = (torch.optim.SGD(ddp.parameters(), lr=args.lr,
                           momentum=args.momentum)
           if args.optimizer == "sgd" else
           torch.optim.Adam(ddp.parameters(), lr=args.lr))
    x, y = torch_mnist.fashion("train")
    for step in range(args.steps):
        idx = [args.rank + 2 * (step * args.batch + i)
               for i in range(args.batch)]
        loss = nn.functional.cross_entropy(ddp(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    if args.rank == 0:
        os.makedirs(args.out, exist_ok=True)
        for name, p in torch_mnist.state_names(model, names):
            np.save(os.path.join(args.out, name + ".npy"),
                    p.detach().numpy())
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gopt-run")
    p.add_argument("--onnx", required=True)
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="sgd")
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-6)
    p.add_argument("--work")
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.lr = args.lr or (1e-3 if args.optimizer == "adam" else 0.05)
    if args.rank is not None:
        return ddp_rank(args)

    work = args.work or tempfile.mkdtemp(prefix="gopt-ddp-")
    torch_dir, gopt_dir = os.path.join(work, "ddp"), os.path.join(work, "gopt")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    common = ["--onnx", args.onnx, "--optimizer", args.optimizer, "--lr",
              str(args.lr), "--momentum", str(args.momentum), "--steps",
              str(args.steps), "--batch", str(args.batch), "--out", torch_dir]
    ranks = [subprocess.Popen([sys.executable, __file__, "--rank", str(r)]
                              + common, env=env) for r in range(2)]
    if any(r.wait(timeout=600) for r in ranks):
        print("PyTorch DDP failed")
        return 1
    opt = ["--optimizer", args.optimizer, "--lr", str(args.lr)]
    if args.optimizer == "sgd":
        opt += ["--momentum", str(args.momentum)]
    subprocess.run([args.gopt_run, args.onnx, "--train", "--nproc", "2",
                    "--threads", "1", "--data", "fashion-mnist", "--no-shuffle",
                    "--steps", str(args.steps), "--batch", str(args.batch),
                    "--save-params", gopt_dir] + opt, check=True,
                   stdout=subprocess.DEVNULL)
    ok = True
    for name in sorted(os.listdir(torch_dir)):
        want = np.load(os.path.join(torch_dir, name))
        got = np.load(os.path.join(gopt_dir, name))
        err = np.abs(got - want)
        bad = err > args.atol + args.rtol * np.abs(want)
        print(f"{name[:-4]:20s} {want.size:8d} values, max abs difference "
              f"{err.max():.2e}, {bad.sum()} outside atol {args.atol:g} + "
              f"rtol {args.rtol:g}" + (": ok" if not bad.any() else
                                        ": MISMATCH"))
        ok &= not bad.any()
    print(f"{args.steps} data-parallel steps match PyTorch DDP" if ok else
          "DATA-PARALLEL STEPS DIFFER FROM PYTORCH DDP")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
