#!/usr/bin/python3
"""Writes a torchvision ResNet-18 for the GPU bundle: OUT_DIR/resnet18.onnx
with resnet18.input.npy and resnet18.output.npy (PyTorch's output) beside it.

  /usr/bin/python3 scripts/make-bundle-resnet18.py OUT_DIR
  GOPT_DEVICE_MODELS="OUT_DIR/resnet18.onnx:f32" scripts/bundle-device.sh B

A trained or randomly initialized ResNet-18's f32 plan (45 MB) barely
compresses and takes the bundle over the 64 MiB a device call carries. Here
every conv and linear weight is rounded to a quarter of its layer's
initial standard deviation and the batch norms are the identity, so the
weights take a few dozen values and the plan compresses to 7 MB. The
architecture, and so the time, is ResNet-18's; the output is still checked
against PyTorch's.
"""
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-bundle-resnet18.py OUT_DIR")
    out = sys.argv[1]
    torch.manual_seed(1234)
    model = torchvision.models.resnet18().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                step = float(m.weight.std()) / 4
                m.weight.copy_(torch.round(m.weight / step) * step)
                if m.bias is not None:
                    m.bias.zero_()
    x = torch.from_numpy(np.random.default_rng(1234).standard_normal(
        (2, 3, 224, 224), dtype=np.float32))
    torch.onnx.export(
        model, x, f"{out}/resnet18.onnx", opset_version=13,
        input_names=["input"], output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
        training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True)
    with torch.no_grad():
        y = model(x).numpy()
    np.save(f"{out}/resnet18.input.npy", x.numpy())
    np.save(f"{out}/resnet18.output.npy", y)
    print(f"{out}/resnet18.onnx: logits up to {abs(y).max():.2f}")


if __name__ == "__main__":
    main()
