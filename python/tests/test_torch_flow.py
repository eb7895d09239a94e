"""A PyTorch user's whole flow: torch model -> torch.onnx.export ->
gopt.load -> optimize -> InferenceSession.run, equal to PyTorch within
1e-5."""
import numpy as np

import gopt
from conftest import requires_compiler, requires_torch, torch

pytestmark = [requires_compiler, requires_torch]


def test_mnist_cnn_matches_pytorch(mnist_onnx):
    path, module = mnist_onnx
    model = gopt.load(path)
    model.optimize(target="cpu")
    session = gopt.InferenceSession(model)
    (inp,) = session.get_inputs()
    # The ONNX file's name for the dynamic dimension, as onnxruntime gives.
    assert inp.name == "input" and inp.shape == ["batch", 1, 28, 28]
    assert session.get_outputs()[0].shape == ["batch", 10]
    assert model.inputs()[0]["shape"] == ["batch", 1, 28, 28]
    # A plan keeps only sizes.
    plan_session = gopt.InferenceSession(gopt.load(model.to_plan().serialize()))
    assert plan_session.get_inputs()[0].shape == [None, 1, 28, 28]
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal(
            (batch, 1, 28, 28), np.float32)
        (y,) = session.run(None, {"input": x})
        with torch.no_grad():
            expected = module(torch.from_numpy(x)).numpy()
        assert y.shape == expected.shape
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_small_resnet_block_matches_pytorch(tmp_path):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = torch.relu(self.conv2(y) + y)
            return torch.softmax(self.fc(torch.flatten(self.pool(y), 1)), 1)

    torch.manual_seed(0)
    module = Block().eval()
    module.bn1.running_mean.uniform_(-0.1, 0.1)
    module.bn1.running_var.uniform_(0.5, 1.5)
    path = str(tmp_path / "block.onnx")
    x = np.random.default_rng(5).standard_normal((2, 3, 16, 16), np.float32)
    torch.onnx.export(module, torch.from_numpy(x), path, opset_version=13,
                      input_names=["x"], output_names=["probs"])
    model = gopt.load(path).optimize()
    assert any(r["pass"] == "gopt-fold-batch-norm" for r in model.report())
    (y,) = gopt.InferenceSession(model).run(["probs"], {"x": x})
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
