#!/usr/bin/python3
"""A small torch.nn.TransformerEncoder text model for transformer-encoder.test.

    make_transformer_encoder.py OUT_DIR

Writes OUT_DIR/model.onnx (exported with dynamic batch and sequence axes),
and for two (batch, seq) sizes the token ids OUT_DIR/ids_{a,b}.npy and
PyTorch's logits OUT_DIR/logits_{a,b}.npy. Exits 77 (skip) without torch.
"""
import os
import sys

import numpy as np

try:
    import torch
except ImportError:
    print("make_transformer_encoder: no torch", file=sys.stderr)
    sys.exit(77)

VOCAB, WIDTH, HEADS, CLASSES = 50, 32, 4, 10
SIZES = {"a": (2, 7), "b": (3, 12)}


class TextEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCAB, WIDTH)
        self.position = torch.nn.Embedding(64, WIDTH)
        # Sequence-first (PyTorch's default layout), so the exported
        # attention reshapes depend on both dynamic axes.
        layer = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, 64, dropout=0.0)
        self.encoder = torch.nn.TransformerEncoder(layer, 2,
                                                   enable_nested_tensor=False)
        self.head = torch.nn.Linear(WIDTH, CLASSES)

    def forward(self, ids):
        # Positions as BERT computes them: a Range of the run-time length,
        # expanded to a run-time [batch, seq].
        batch, seq = ids.shape
        positions = torch.arange(seq).unsqueeze(0).expand(batch, seq)
        x = (self.embedding(ids) + self.position(positions)).transpose(0, 1)
        return self.head(self.encoder(x).transpose(0, 1))


def main(out_dir):
    torch.manual_seed(0)
    model = TextEncoder().eval()
    rng = np.random.RandomState(0)
    example = torch.from_numpy(rng.randint(0, VOCAB, SIZES["a"]))
    torch.onnx.export(model, (example,), os.path.join(out_dir, "model.onnx"),
                      input_names=["ids"], output_names=["logits"],
                      dynamic_axes={"ids": {0: "batch", 1: "seq"},
                                    "logits": {0: "batch", 1: "seq"}},
                      opset_version=14)
    for name, size in SIZES.items():
        ids = rng.randint(0, VOCAB, size).astype(np.int64)
        with torch.no_grad():
            logits = model(torch.from_numpy(ids)).numpy()
        np.save(os.path.join(out_dir, f"ids_{name}.npy"), ids)
        np.save(os.path.join(out_dir, f"logits_{name}.npy"), logits)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    main(sys.argv[1])
