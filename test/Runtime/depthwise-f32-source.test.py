"""Writes mb.onnx and mb2.onnx (torchvision's EfficientNet-B0 up to its
second stage, random weights: the stem, a block with squeeze-and-excitation
projecting to 16 channels, and 1x1 expansions read by depthwise
convolutions), exported by PyTorch for one image and for two, with x.npy,
x2.npy (the images) and y.npy, y2.npy (PyTorch's results) into the
directory given."""
import os
import sys

import numpy as np
import torch
import torchvision

out = sys.argv[1]
torch.manual_seed(0)
net = torchvision.models.efficientnet_b0().features[:3].eval()
for batch, suffix in ((1, ""), (2, "2")):
    x = torch.randn(batch, 3, 224, 224)
    with torch.no_grad():
        y = net(x)
    torch.onnx.export(net, (x,), os.path.join(out, f"mb{suffix}.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=14)
    np.save(os.path.join(out, f"x{suffix}.npy"), x.numpy())
    np.save(os.path.join(out, f"y{suffix}.npy"), y.numpy())
