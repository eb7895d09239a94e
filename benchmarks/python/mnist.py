"""The MNIST CNN of gopt's training examples as ONNX, for the Python
benchmarks: ../shared/models/mnist_cnn.onnx when present, else exported
here from PyTorch with the same architecture and seed (1234)."""
import os

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                      "models", "mnist_cnn.onnx")


def mnist_cnn_onnx(out_dir, path=None):
    """A path to the MNIST CNN as ONNX (dynamic batch, input "input")."""
    if path:
        return path
    if os.path.exists(SHARED):
        return os.path.abspath(SHARED)
    import torch
    import torch.nn as nn
    torch.manual_seed(1234)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, 10)).eval()
    path = os.path.join(out_dir, "mnist_cnn.onnx")
    torch.onnx.export(model, torch.zeros(2, 1, 28, 28), path, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    return path


def import_gopt(build_dir):
    """gopt from BUILD_DIR/python (whatever the .pth of setup.sh says)."""
    import sys
    sys.path.insert(0, os.path.abspath(os.path.join(build_dir, "python")))
    import gopt
    return gopt
