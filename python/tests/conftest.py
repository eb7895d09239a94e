"""Fixtures of gopt's Python tests: small graphs written here (no files from
outside the repository), and models exported from PyTorch when Debian's
python3-torch is installed (the tests that need it are skipped otherwise).

Run with Debian's Python: /usr/bin/python3 -m pytest python/tests
"""
import os
import sys

import numpy as np
import pytest

# The build's package when the .pth of scripts/setup.sh is not installed:
# GOPT_PYTHON_DIR, or build/python next to this checkout.
_build = os.environ.get("GOPT_PYTHON_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "python")
if os.path.isdir(os.path.join(_build, "gopt")):
    sys.path.insert(0, os.path.abspath(_build))

import gopt  # noqa: E402

RELU_MLIR = """
func.func @main(%x: tensor<?x4xf32> {gopt.name = "x"}) -> (tensor<?x4xf32> {gopt.name = "y"}) {
  %y = gopt.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
"""

# NHWC conv + identity + relu: something for every optimize step to do.
CONV_MLIR = """
func.func @main(%x: tensor<?x8x8x4xf32> {gopt.name = "x"}) -> (tensor<?x8x8x4xf32> {gopt.name = "y"}) {
  %xi = gopt.identity %x : (tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  %w = gopt.constant dense<[[[[0.5, -0.25, 0.125, 1.0], [0.25, 0.5, -1.0, 0.0], [1.0, 0.0, 0.5, -0.5], [-0.5, 0.75, 0.25, 0.5]]]]> : tensor<1x1x4x4xf32>
  %c = gopt.conv2d %xi, %w {strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<?x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<?x8x8x4xf32>
  %b = gopt.constant dense<[0.1, -0.2, 0.3, 0.0]> : tensor<4xf32>
  %cb = gopt.bias_add %c, %b : (tensor<?x8x8x4xf32>, tensor<4xf32>) -> tensor<?x8x8x4xf32>
  %r = gopt.relu %cb : (tensor<?x8x8x4xf32>) -> tensor<?x8x8x4xf32>
  return %r : tensor<?x8x8x4xf32>
}
"""

CONV_WEIGHT = np.array([[[[0.5, -0.25, 0.125, 1.0], [0.25, 0.5, -1.0, 0.0],
                          [1.0, 0.0, 0.5, -0.5], [-0.5, 0.75, 0.25, 0.5]]]],
                       np.float32)
CONV_BIAS = np.array([0.1, -0.2, 0.3, 0.0], np.float32)


def conv_reference(x):
    """What CONV_MLIR computes, in numpy (a 1x1 conv is a matmul)."""
    return np.maximum(x @ CONV_WEIGHT[0, 0] + CONV_BIAS, 0)


def _write(tmp_path_factory, name, text):
    path = tmp_path_factory.mktemp("graphs") / name
    path.write_text(text)
    return str(path)


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@pytest.fixture(scope="session")
def relu_plan():
    """RELU_MLIR lowered (data/make_plans.py): runs without the compiler."""
    return os.path.join(DATA, "relu.gplan")


@pytest.fixture(scope="session")
def conv_plan():
    """CONV_MLIR lowered (data/make_plans.py)."""
    return os.path.join(DATA, "conv.gplan")


@pytest.fixture(scope="session")
def relu_mlir(tmp_path_factory):
    return _write(tmp_path_factory, "relu.mlir", RELU_MLIR)


@pytest.fixture(scope="session")
def conv_mlir(tmp_path_factory):
    return _write(tmp_path_factory, "conv.mlir", CONV_MLIR)


requires_compiler = pytest.mark.skipif(
    not gopt.has_compiler(), reason="this gopt was built without the compiler")


def _torch():
    try:
        import onnx  # noqa: F401
        import torch
    except ImportError:
        return None
    return torch


torch = _torch()
requires_torch = pytest.mark.skipif(
    torch is None, reason="needs Debian's python3-torch and python3-onnx")


def mnist_cnn():
    """The MNIST CNN of the training examples (Keras' MNIST CNN)."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, 10))


@pytest.fixture(scope="session")
def mnist_onnx(tmp_path_factory):
    """The MNIST CNN with fixed random weights as ONNX (dynamic batch), and
    the torch module it came from."""
    if torch is None:
        pytest.skip("needs Debian's python3-torch and python3-onnx")
    torch.manual_seed(1234)
    model = mnist_cnn().eval()
    path = tmp_path_factory.mktemp("mnist") / "mnist_cnn.onnx"
    x = torch.zeros(1, 1, 28, 28)
    torch.onnx.export(model, x, str(path), opset_version=13,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"},
                                    "output": {0: "batch"}})
    return str(path), model
