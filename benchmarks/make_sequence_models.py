#!/usr/bin/python3
"""Export the sequence models benchmarks/real_models.py times against ONNX
Runtime, with Debian's PyTorch (nothing is downloaded or committed).

    benchmarks/make_sequence_models.py OUT_DIR

Writes OUT_DIR/transformer.onnx and OUT_DIR/lstm.onnx, both with a dynamic
batch axis:

- transformer: a BERT-mini-sized text encoder (torch.nn.TransformerEncoder,
  4 layers, width 256, 4 heads, feed-forward 1024, batch-first) over int64
  token ids [batch, 128], with token and position embeddings and a
  10-class head on the first token;
- lstm: a speech-style acoustic model, torch.nn.LSTM with 2 layers of 256
  over [batch, 100, 80] features, and a per-frame 32-class head.

The weights are seeded, so every run exports the same models. Exits 77
(skip) when torch is missing.
"""
import os
import sys

try:
    import torch
except ImportError:
    print("make_sequence_models: no torch", file=sys.stderr)
    sys.exit(77)

VOCAB, SEQ, WIDTH, HEADS, FF, LAYERS, CLASSES = 1000, 128, 256, 4, 1024, 4, 10
FRAMES, FEATURES, HIDDEN, LSTM_LAYERS, PHONES = 100, 80, 256, 2, 32


class TextEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCAB, WIDTH)
        self.position = torch.nn.Parameter(torch.randn(1, SEQ, WIDTH) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, FF, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, LAYERS,
                                                   enable_nested_tensor=False)
        self.head = torch.nn.Linear(WIDTH, CLASSES)

    def forward(self, ids):
        x = self.embedding(ids) + self.position
        return self.head(self.encoder(x)[:, 0])


class AcousticModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(FEATURES, HIDDEN, LSTM_LAYERS,
                                  batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, PHONES)

    def forward(self, features):
        return self.head(self.lstm(features)[0])


def export(model, example, path, input_name):
    torch.onnx.export(model.eval(), (example,), path, input_names=[input_name],
                      output_names=["y"],
                      dynamic_axes={input_name: {0: "batch"}, "y": {0: "batch"}},
                      opset_version=14)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    export(TextEncoder(), torch.randint(0, VOCAB, (2, SEQ)),
           os.path.join(out_dir, "transformer.onnx"), "ids")
    export(AcousticModel(), torch.randn(2, FRAMES, FEATURES),
           os.path.join(out_dir, "lstm.onnx"), "features")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    main(sys.argv[1])
