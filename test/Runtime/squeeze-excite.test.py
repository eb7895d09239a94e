"""Writes se.onnx (a MobileNetV3 and an EfficientNet squeeze-and-excitation
block, as torchvision writes them, exported by PyTorch with a dynamic
batch), x.npy (3 images) and y.npy (PyTorch's result) into the directory
given."""
import os
import sys

import numpy as np
import torch
from torch import nn
from torchvision.ops import SqueezeExcitation


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 40, 3, padding=1)
        # MobileNetV3: relu, hard sigmoid
        self.se1 = SqueezeExcitation(40, 16, scale_activation=nn.Hardsigmoid)
        self.mid = nn.Conv2d(40, 24, 1)
        # EfficientNet: SiLU, sigmoid
        self.se2 = SqueezeExcitation(24, 6, activation=nn.SiLU)
        self.head = nn.Conv2d(24, 8, 1)

    def forward(self, x):
        x = self.se1(self.stem(x))
        return self.head(self.se2(self.mid(x)))


out = sys.argv[1]
torch.manual_seed(0)
net = Net().eval()
x = torch.randn(3, 3, 9, 11)
with torch.no_grad():
    y = net(x)
torch.onnx.export(net, (x,), os.path.join(out, "se.onnx"),
                  input_names=["x"], output_names=["y"], opset_version=14,
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y.npy"), y.numpy())
