"""Writes shuffle.onnx (two ShuffleNetV2 units as torchvision writes them,
exported by PyTorch with a dynamic batch), x.npy (3 images) and y.npy
(PyTorch's result) into the directory given."""
import os
import sys

import numpy as np
import torch
from torch import nn


def channel_shuffle(x, groups):
    # torchvision.models.shufflenetv2.channel_shuffle
    batchsize, num_channels, height, width = x.size()
    x = x.view(batchsize, groups, num_channels // groups, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(batchsize, num_channels, height, width)


class Unit(nn.Module):
    """A stride-1 unit: the first half passes, the second goes through
    1x1, 3x3 depthwise and 1x1 convolutions."""

    def __init__(self, c):
        super().__init__()
        h = c // 2
        self.branch2 = nn.Sequential(
            nn.Conv2d(h, h, 1), nn.ReLU(),
            nn.Conv2d(h, h, 3, padding=1, groups=h),
            nn.Conv2d(h, h, 1), nn.ReLU())

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat((x1, self.branch2(x2)), dim=1), 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 116, 3, padding=1)
        self.units = nn.Sequential(Unit(116), Unit(116))
        self.head = nn.Conv2d(116, 8, 1)

    def forward(self, x):
        return self.head(self.units(self.stem(x)))


out = sys.argv[1]
torch.manual_seed(0)
net = Net().eval()
x = torch.randn(3, 3, 9, 11)
with torch.no_grad():
    y = net(x)
torch.onnx.export(net, (x,), os.path.join(out, "shuffle.onnx"),
                  input_names=["x"], output_names=["y"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y.npy"), y.numpy())
