#!/usr/bin/python3
"""PyTorch reference for gopt's MNIST CNN training.

The ALCF tutorial's CNN (conv32, conv64, maxpool, [dropout], dense128,
[dropout], dense10) built as in ../shared/models/make_models.py, starting
from the weights stored in mnist_cnn.onnx, so gopt and PyTorch start from the
same point. Data: Fashion-MNIST IDX files scaled to [0, 1], as
`gopt-run --data fashion-mnist` reads them.

  torch_mnist.py one-step --onnx M.onnx --out DIR [--optimizer sgd]   one
        Adam (or SGD) step on the first 64 training images (no shuffling);
        parameters to DIR/NAME.npy
  torch_mnist.py train --onnx M.onnx --epochs 2 [--dropout]   test accuracy
        after each epoch and samples/s (JSON on the last line)
  torch_mnist.py time --onnx M.onnx --batch B --steps N   training-step
        throughput on constant data (JSON on the last line)
  torch_mnist.py export --onnx M.onnx --out D.onnx   the network with its
        dropouts, exported in training mode, from M.onnx's weights

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn

FASHION = "/usr/share/datasets/fashion-mnist"


def make_model(dropout):
    layers = [nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
              nn.MaxPool2d(2)]
    if dropout:
        layers.append(nn.Dropout(0.25))
    layers += [nn.Flatten(), nn.Linear(9216, 128), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(0.5))
    layers.append(nn.Linear(128, 10))
    model = nn.Module()
    model.features = nn.Sequential(*layers)
    model.forward = lambda x: model.features(x)
    return model


def load_onnx_weights(model, path):
    """Copies mnist_cnn.onnx's initializers (features.N.weight/bias) into the
    model; with dropout the layer indices shift, so match by order."""
    inits = {i.name: onnx.numpy_helper.to_array(i)
             for i in onnx.load(path).graph.initializer}
    names = sorted((n for n in inits if n.startswith("features.")),
                   key=lambda n: (int(n.split(".")[1]), n.endswith("bias")))
    params = [p for p in model.parameters()]
    if len(params) != len(names):
        sys.exit(f"{path}: {len(names)} initializers for {len(params)} "
                 "parameters")
    with torch.no_grad():
        for p, n in zip(params, names):
            p.copy_(torch.from_numpy(inits[n].copy()))
    return names


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    if magic == 0x803:
        n, h, w = (int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
                   for i in range(3))
        return np.frombuffer(data, np.uint8, offset=16).reshape(n, 1, h, w)
    n = int.from_bytes(data[4:8], "big")
    return np.frombuffer(data, np.uint8, offset=8)


def fashion(split):
    x = read_idx(f"{FASHION}/{split}-images-idx3-ubyte.gz")
    y = read_idx(f"{FASHION}/{split}-labels-idx1-ubyte.gz")
    return (torch.from_numpy(x.astype(np.float32) / 255.0),
            torch.from_numpy(y.astype(np.int64)))


def state_names(model, onnx_names):
    """gopt names parameters after the ONNX initializers."""
    return list(zip(onnx_names, model.parameters()))


def one_step(args):
    torch.manual_seed(args.seed)
    model = make_model(dropout=False)
    names = load_onnx_weights(model, args.onnx)
    x, y = fashion("train")
    opt = (torch.optim.SGD(model.parameters(), lr=args.lr,
                           momentum=args.momentum)
           if args.optimizer == "sgd" else
           torch.optim.Adam(model.parameters(), lr=args.lr))
    loss = nn.functional.cross_entropy(model(x[:args.batch]), y[:args.batch])
    opt.zero_grad()
    loss.backward()
    opt.step()
    os.makedirs(args.out, exist_ok=True)
    for name, p in state_names(model, names):
        np.save(os.path.join(args.out, name + ".npy"), p.detach().numpy())
    print(f"loss {loss.item():.6f}")


def evaluate(model, x, y):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), 500):
            correct += (model(x[i:i + 500]).argmax(1) == y[i:i + 500]).sum().item()
    model.train()
    return correct / len(x)


def train(args):
    torch.manual_seed(args.seed)
    model = make_model(args.dropout)
    load_onnx_weights(model, args.onnx)
    x, y = fashion("train")
    tx, ty = fashion("t10k")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    accuracies, samples, seconds = [], 0, 0.0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x))
        start = time.perf_counter()
        for i in range(0, len(x) - args.batch + 1, args.batch):
            idx = perm[i:i + args.batch]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            samples += args.batch
        seconds += time.perf_counter() - start
        accuracies.append(evaluate(model, tx, ty))
        print(f"epoch {epoch + 1}: test accuracy {100 * accuracies[-1]:.2f}%",
              flush=True)
    print(json.dumps({"accuracy": accuracies, "samples_per_s": samples / seconds,
                      "dropout": args.dropout}))


def time_steps(args):
    model = make_model(args.dropout)
    load_onnx_weights(model, args.onnx)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    x = torch.full((args.batch, 1, 28, 28), 0.5)
    y = torch.arange(args.batch) % 10
    times = []
    # --bf16: PyTorch's CPU autocast (f32 master weights, bf16 conv/matmul),
    # the counterpart of gopt-run --train --precision bf16.
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16)
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        with autocast:
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    median = sorted(times)[len(times) // 2]
    print(json.dumps({"batch": args.batch, "median_step_s": median,
                      "samples_per_s": args.batch / median}))


def export(args):
    """The network with its dropouts, exported in training mode (ONNX
    Dropout with training_mode = true) from mnist_cnn.onnx's weights: what
    gopt-run --train needs to train the recipe itself."""
    model = make_model(dropout=True)
    load_onnx_weights(model, args.onnx)
    model.train()
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), args.out,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    print(f"wrote {args.out}")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["one-step", "train", "time", "export"])
    p.add_argument("--onnx", required=True)
    p.add_argument("--out")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dropout", action="store_true")
    p.add_argument("--bf16", action="store_true",
                   help="time: train under torch.autocast('cpu', bfloat16)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.mode not in ("time", "export") and not os.path.isdir(FASHION):
        sys.exit(f"Fashion-MNIST not found under {FASHION} "
                 "(apt-get install dataset-fashion-mnist)")
    {"one-step": one_step, "train": train, "time": time_steps,
     "export": export}[args.mode](args)


if __name__ == "__main__":
    main()
