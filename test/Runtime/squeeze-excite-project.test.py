"""Writes sep.onnx (two EfficientNet-style MBConv blocks as torchvision
builds them: 1x1 expand + SiLU, 3x3 depthwise + SiLU, squeeze-and-
excitation, 1x1 projection, the first with its residual add; any batch),
x.npy (one image), x3.npy (three) and y.npy, y3.npy (PyTorch's results)
into the directory given."""
import os
import sys

import numpy as np
import torch
from torch import nn
from torchvision.ops import SqueezeExcitation


def mbconv(cin, cout, expand):
    mid = cin * expand
    return nn.Sequential(
        nn.Conv2d(cin, mid, 1), nn.SiLU(),
        nn.Conv2d(mid, mid, 3, padding=1, groups=mid), nn.SiLU(),
        SqueezeExcitation(mid, max(1, cin // 4), activation=nn.SiLU),
        nn.Conv2d(mid, cout, 1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = mbconv(16, 16, 6)  # 96 -> 16, with the residual
        self.b2 = mbconv(16, 24, 6)  # 96 -> 24, none

    def forward(self, x):
        x = self.stem(x)
        x = x + self.b1(x)
        return self.b2(x)


out = sys.argv[1]
torch.manual_seed(0)
net = Net().eval()
x = torch.randn(1, 3, 19, 21)
x3 = torch.randn(3, 3, 19, 21)
with torch.no_grad():
    y = net(x)
    y3 = net(x3)
torch.onnx.export(net, (x,), os.path.join(out, "sep.onnx"),
                  input_names=["x"], output_names=["y"], opset_version=14,
                  dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y.npy"), y.numpy())
np.save(os.path.join(out, "x3.npy"), x3.numpy())
np.save(os.path.join(out, "y3.npy"), y3.numpy())
