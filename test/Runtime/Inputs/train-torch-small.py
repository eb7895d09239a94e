#!/usr/bin/python3
"""A few SGD steps of a small model in PyTorch, against gopt-run --train on
its ONNX export from the same initial weights (train-rnn-pytorch.test,
train-conv3d-pytorch.test, train-norms-pytorch.test): a bidirectional
torch.nn.LSTM or GRU sequence classifier, a 3-D conv net (Conv3d,
MaxPool3d, AvgPool3d, ConvTranspose3d), or a conv net with GroupNorm,
LocalResponseNorm and einsum.

  train-torch-small.py make    --model lstm|gru|conv3d|norms --out DIR
  train-torch-small.py compare --model lstm|gru|conv3d|norms --out DIR
                               --gopt DIR [--rtol X]

`make` writes DIR/model.onnx, DIR/x.npy, DIR/labels.npy (STEPS batches of
BATCH, read in order by --no-shuffle) and DIR/torch/*.npy: the parameters
after the steps in ONNX's layout (the exporter's gate order, input and
recurrent biases concatenated), and DIR/initial/*.npy the same before them.
`compare` matches each gopt-saved parameter to PyTorch's by shape (every
parameter's shape differs), or by name where gopt saved one of the name,
within --rtol, and also compares the steps'
updates (new - initial): within 1% of the largest, so a gradient that is a
little wrong cannot hide behind parameters that barely move.
"""
import argparse
import os
import sys

import numpy as np
import torch

SEQ, FEATURES, HIDDEN, CLASSES, BATCH, STEPS, LR = 6, 3, 5, 4, 4, 3, 0.5


class VolumeNet(torch.nn.Module):
    """[N, 2, 4, 6, 6] volumes: every 3-D window op gopt differentiates."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv3d(2, 3, 3, stride=(1, 2, 1), padding=1)
        self.up = torch.nn.ConvTranspose3d(3, 2, 2, stride=2)
        self.head = torch.nn.Linear(2 + 3, CLASSES)

    def forward(self, x):
        a = torch.tanh(self.conv(x))
        pooled = torch.nn.functional.max_pool3d(a, 2, stride=1)
        up = torch.tanh(self.up(pooled))
        avg = torch.nn.functional.avg_pool3d(a, 2, stride=2, ceil_mode=True)
        return self.head(torch.cat([up.mean(dim=(2, 3, 4)),
                                    avg.mean(dim=(2, 3, 4))], dim=1))


class ExportedLrn(torch.autograd.Function):
    """F.local_response_norm, exported as one ONNX LRN node (PyTorch's
    exporter writes its decomposition into pads and pools otherwise)."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        return torch.nn.functional.local_response_norm(x, size, alpha, beta, k)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, k):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta,
                    bias_f=k)


class NormNet(torch.nn.Module):
    """[N, 2, 5, 5] images through GroupNorm, LocalResponseNorm (ONNX LRN)
    and two einsums: a 1x1 channel mix with a learned matrix, and a
    bilinear pooling of the spatial positions."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 6, 3, padding=1)
        self.gn = torch.nn.GroupNorm(3, 6)
        self.lrn = torch.nn.LocalResponseNorm(3, alpha=0.5, beta=0.75, k=1.5)
        # An odd size: for an even one PyTorch's window leans back (size // 2
        # channels before c) and ONNX's forward.
        # Set while exporting: the LRN node rather than its decomposition.
        self.exporting = False
        self.mix = torch.nn.Parameter(torch.randn(4, 6) * 0.4)
        self.head = torch.nn.Linear(4 * 4, CLASSES)

    def forward(self, x):
        a = torch.tanh(self.gn(self.conv(x)))
        lrn = self.lrn
        b = (ExportedLrn.apply(a * 2.0, lrn.size, lrn.alpha, lrn.beta, lrn.k)
             if self.exporting else lrn(a * 2.0))
        m = torch.einsum("nchw,dc->ndhw", b, self.mix)
        flat = m.flatten(2)
        gram = torch.einsum("nip,njp->nij", flat, flat) / flat.shape[2]
        return self.head(gram.flatten(1))


class Classifier(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        layer = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
        self.rnn = layer(FEATURES, HIDDEN, batch_first=True,
                         bidirectional=True)
        self.head = torch.nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x):
        y = self.rnn(x)[0]
        # Every step's output reaches the loss (the mean over time), so
        # both directions' gradients flow through the whole sequence.
        return self.head(torch.tanh(y).mean(dim=1))


def onnx_blocks(cell):
    # PyTorch's gate blocks -> ONNX's: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n
    # -> z,r,h.
    return [0, 3, 1, 2] if cell == "lstm" else [1, 0, 2]


def onnx_params(model, cell):
    """The recurrent parameters in the exporter's layout, keyed by shape
    class; the head as it is."""
    order = onnx_blocks(cell)
    g = len(order)

    def reorder(t):
        blocks = t.detach().numpy().reshape(g, HIDDEN, *t.shape[1:])
        return np.concatenate([blocks[i] for i in order])

    rnn = model.rnn
    w, r, b = [], [], []
    for suffix in ["", "_reverse"]:
        w.append(reorder(getattr(rnn, "weight_ih_l0" + suffix)))
        r.append(reorder(getattr(rnn, "weight_hh_l0" + suffix)))
        b.append(np.concatenate([reorder(getattr(rnn, "bias_ih_l0" + suffix)),
                                 reorder(getattr(rnn, "bias_hh_l0" + suffix))]))
    return {"w": np.stack(w), "r": np.stack(r), "b": np.stack(b),
            "head.weight": model.head.weight.detach().numpy(),
            "head.bias": model.head.bias.detach().numpy()}


def volume_params(model):
    """The 3-D net's parameters as the exporter names them."""
    return {name: p.detach().numpy().copy()
            for name, p in model.named_parameters()}


def make(args):
    torch.manual_seed(3)
    volume = args.model in ("conv3d", "norms")
    model = (NormNet() if args.model == "norms" else VolumeNet() if volume
             else Classifier(args.model))
    params = volume_params if volume else (
        lambda m: onnx_params(m, args.model))
    os.makedirs(os.path.join(args.out, "torch"), exist_ok=True)
    shape = {"conv3d": (2, 4, 6, 6), "norms": (2, 5, 5)}.get(
        args.model, (SEQ, FEATURES))
    x = torch.randn(STEPS * BATCH, *shape)
    labels = torch.arange(STEPS * BATCH) % CLASSES
    np.save(os.path.join(args.out, "x.npy"), x.numpy())
    np.save(os.path.join(args.out, "labels.npy"), labels.numpy())
    model.exporting = True
    # Unfolded constants keep GroupNorm's scale and bias as the parameters
    # they are (folding would unsqueeze them into new [C, 1, 1] tensors).
    torch.onnx.export(model.eval(), (x[:BATCH],),
                      os.path.join(args.out, "model.onnx"),
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=14,
                      do_constant_folding=args.model != "norms")
    model.exporting = False
    os.makedirs(os.path.join(args.out, "initial"), exist_ok=True)
    for name, value in params(model).items():
        np.save(os.path.join(args.out, "initial", name + ".npy"), value)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    model.train()
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x[rows]), labels[rows])
        loss.backward()
        optimizer.step()
    for name, value in params(model).items():
        np.save(os.path.join(args.out, "torch", name + ".npy"), value)


def compare(args):
    want = {name[:-4]: np.load(os.path.join(args.out, "torch", name))
            for name in os.listdir(os.path.join(args.out, "torch"))}
    got = {name[:-4]: np.load(os.path.join(args.gopt, name))
           for name in os.listdir(args.gopt) if name.endswith(".npy")}
    if len(got) != len(want):
        print(f"gopt saved {len(got)} parameters ({sorted(got)}), PyTorch "
              f"has {len(want)}: MISMATCH")
        return 1
    ok = True
    for name, value in sorted(want.items()):
        matches = ([got[name]] if name in got
                   else [g for g in got.values() if g.shape == value.shape])
        if len(matches) != 1:
            print(f"{name}: {len(matches)} gopt parameters of shape "
                  f"{value.shape}: MISMATCH")
            ok = False
            continue
        err = np.abs(matches[0] - value)
        bad = (err > args.rtol * np.abs(value) + 1e-7).sum()
        initial = np.load(os.path.join(args.out, "initial", name + ".npy"))
        update = np.abs(value - initial).max()
        update_err = np.abs((matches[0] - initial) - (value - initial)).max()
        moved = update > 1e-4 and update_err <= 1e-2 * update
        print(f"{name:12s} {value.size:4d} values, max abs difference "
              f"{err.max():.2e}, {bad} outside rtol {args.rtol:g}, update "
              f"{update:.2e} (error {update_err:.1e}): "
              + ("ok" if bad == 0 and moved else "MISMATCH"))
        ok &= bad == 0 and moved
    print(f"{STEPS} steps match PyTorch" if ok
          else f"{STEPS} STEPS DIFFER FROM PYTORCH")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["make", "compare"])
    p.add_argument("--model", choices=["lstm", "gru", "conv3d", "norms"], required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--gopt")
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()
    if args.mode == "make":
        make(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
