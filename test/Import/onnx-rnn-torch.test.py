"""Writes PyTorch recurrent sequence models exported to ONNX (opset 14),
their input and PyTorch's outputs as .npy, into the directory given:
a 2-layer bidirectional batch_first nn.LSTM and the same nn.GRU, each
followed by a linear head, with PyTorch's zero initial states."""
import os
import sys

import numpy as np
import torch

out = sys.argv[1]
torch.manual_seed(0)


class SequenceModel(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=6, hidden_size=8, num_layers=2,
                        batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


# A batch of 5 takes the fast kernels' packed recurrent matmul (from 4 rows);
# the node suite's small batches take their sgemm path.
x = torch.randn(5, 5, 6)
np.save(os.path.join(out, "x.npy"), x.numpy())
for name, cell in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)):
    model = SequenceModel(cell).eval()
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(out, name + "_y.npy"), y.numpy())
    torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"),
                      input_names=["x"], output_names=["y"], opset_version=14)
