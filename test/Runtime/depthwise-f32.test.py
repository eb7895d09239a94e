"""Writes dw.onnx (MobileNetV2-, MobileNetV3- and EfficientNet-like
inverted residual blocks at odd sizes, exported by PyTorch), x.npy (one
image) and y.npy (PyTorch's result) into the directory given."""
import os
import sys

import numpy as np
import torch
from torch import nn


def block(cin, mid, cout, k, stride, act):
    return nn.Sequential(
        nn.Conv2d(cin, mid, 1), act(),
        nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid), act(),
        nn.Conv2d(mid, cout, 1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        # 77x75x96 f32 (2.2 MB) expanded: a banded chain at batch 1.
        self.b1 = block(16, 96, 24, 3, 2, nn.ReLU6)
        self.b2 = block(24, 72, 40, 5, 1, nn.Hardswish)
        self.b3 = block(40, 120, 32, 3, 2, nn.SiLU)
        self.b4 = block(32, 200, 24, 5, 2, nn.SiLU)

    def forward(self, x):
        return self.b4(self.b3(self.b2(self.b1(self.stem(x)))))


out = sys.argv[1]
torch.manual_seed(0)
net = Net().eval()
x = torch.randn(1, 3, 77, 75)
with torch.no_grad():
    y = net(x)
torch.onnx.export(net, (x,), os.path.join(out, "dw.onnx"),
                  input_names=["x"], output_names=["y"], opset_version=14)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y.npy"), y.numpy())
