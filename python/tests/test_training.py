"""gopt.TrainingSession and gopt.DataLoader: the same steps as
`gopt-run --train` with the same seed, parameters, save/load, evaluation,
and the input pipeline's iterator and statistics.

The full-epoch accuracy comparison on Fashion-MNIST (one epoch from Python
against gopt-run --train) is benchmarks/python/train_epoch.py; its result is
in docs/python.md. Here the same equivalence is checked on a few steps."""
import os
import subprocess

import numpy as np
import pytest

import gopt
from conftest import requires_compiler, requires_torch


FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
DATA = "fashion-mnist" if os.path.isdir(FASHION_MNIST) else "fake"

# A small MLP on 1x28x28 examples (no torch needed): flatten, dense 16,
# relu, dense 10.
MLP_MLIR = """
func.func @main(%x: tensor<?x1x28x28xf32> {gopt.name = "x"}) -> (tensor<?x10xf32> {gopt.name = "logits"}) {
  %f = gopt.flatten %x {axis = 1 : i64} : (tensor<?x1x28x28xf32>) -> tensor<?x784xf32>
  %w1 = gopt.constant dense<WEIGHTS1> : tensor<784x16xf32>
  %b1 = gopt.constant dense<0.01> : tensor<16xf32>
  %h = gopt.matmul %f, %w1 : (tensor<?x784xf32>, tensor<784x16xf32>) -> tensor<?x16xf32>
  %hb = gopt.bias_add %h, %b1 : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = gopt.relu %hb : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %w2 = gopt.constant dense<WEIGHTS2> : tensor<16x10xf32>
  %y = gopt.matmul %r, %w2 : (tensor<?x16xf32>, tensor<16x10xf32>) -> tensor<?x10xf32>
  return %y : tensor<?x10xf32>
}
"""


def _dense(values):
    return "[" + ", ".join(
        _dense(v) if isinstance(v, list) else f"{v:.6e}" for v in values) + "]"


@pytest.fixture(scope="module")
def mlp_mlir(tmp_path_factory):
    rng = np.random.default_rng(42)
    w1 = (rng.standard_normal((784, 16)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((16, 10)) * 0.3).astype(np.float32)
    text = MLP_MLIR.replace("WEIGHTS1", _dense(w1.tolist())).replace(
        "WEIGHTS2", _dense(w2.tolist()))
    path = tmp_path_factory.mktemp("mlp") / "mlp.mlir"
    path.write_text(text)
    return str(path)


def gopt_run():
    build = os.environ.get("GOPT_PYTHON_DIR") or os.path.join(
        os.path.dirname(gopt.__file__), "..")
    path = os.path.join(build, "..", "bin", "gopt-run")
    if not os.path.exists(path):
        pytest.skip(f"no gopt-run next to the module ({path})")
    return os.path.abspath(path)


def test_data_loader_iterates_with_stats():
    loader = gopt.DataLoader("fake", batch_size=8, shuffle=True, seed=3,
                             epochs=2, example_shape=(1, 28, 28))
    batches = list(loader)
    assert len(batches) == len(loader) == 2 * loader.batches_per_epoch
    x, y = batches[0]
    assert x.shape == (8, 1, 28, 28) and x.dtype == np.float32
    assert y.shape == (8,) and y.dtype == np.int64
    stats = loader.stats()
    assert stats["batches"] == len(batches) and stats["capacity"] == 4
    assert sum(stats["fill_histogram"]) == len(batches)
    assert loader.verdict().split(":")[0] in ("data-bound", "compute-bound")
    # The same seed gives the same batches, whatever the threads.
    again = list(gopt.DataLoader("fake", batch_size=8, shuffle=True, seed=3,
                                 epochs=2, threads=1))
    for (a, b), (c, d) in zip(batches, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_data_loader_npy_and_errors(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((10, 3, 4, 4), np.float32))
    np.save(tmp_path / "y.npy", rng.integers(0, 5, 10))
    loader = gopt.DataLoader(f"npy:{tmp_path}/x.npy,{tmp_path}/y.npy",
                             batch_size=4, shuffle=False, example_shape=(3, 4, 4))
    assert [x.shape[0] for x, _ in loader] == [4, 4]
    with pytest.raises(gopt.Error, match="nothing.npy"):
        gopt.DataLoader(f"npy:{tmp_path}/nothing.npy,{tmp_path}/y.npy")
    with pytest.raises(gopt.Error):
        gopt.DataLoader("no-such-kind:abc")


@requires_compiler
def test_steps_match_gopt_run(mlp_mlir, tmp_path):
    """gopt-run --train --steps 20 and 20 Python steps over a DataLoader with
    the same seed end at the same parameters."""
    steps = 20
    saved = tmp_path / "cli"
    subprocess.run([gopt_run(), mlp_mlir, "--train", "--data", DATA,
                    "--steps", str(steps), "--batch", "32", "--seed", "7",
                    "--lr", "0.001", "--threads", "1",
                    "--save-params", str(saved)],
                   check=True, capture_output=True, text=True)
    session = gopt.TrainingSession(gopt.load(mlp_mlir), lr=1e-3,
                                   batch_size=32, seed=7, threads=1)
    loader = session.data(DATA, batch_size=32, seed=7, epochs=None)
    losses = [session.step(x, y) for (x, y), _ in zip(loader, range(steps))]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    params = session.parameters()
    assert len(params) == 3
    for name, value in params.items():
        expected = np.load(saved / (name.replace("/", "__") + ".npy"))
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@requires_compiler
def test_evaluate_save_load_and_set_parameters(mlp_mlir, tmp_path):
    session = gopt.TrainingSession(mlp_mlir, optimizer="sgd", lr=0.1,
                                   batch_size=16)
    assert session.input_name == "x" and session.example_shape == (1, 28, 28)
    assert session.num_classes == 10
    x, y = next(iter(session.data("fake", batch_size=16)))
    before = session.evaluate(x, y)
    for _ in range(30):
        session.step(x, y)
    after = session.evaluate(x, y, batch_size=5)
    assert after["total"] == 16 and after["loss"] < before["loss"]
    session.save(tmp_path / "params")
    trained = session.parameters()
    fresh = gopt.TrainingSession(mlp_mlir, optimizer="sgd", lr=0.1)
    fresh.load(tmp_path / "params")
    for name, value in fresh.parameters().items():
        np.testing.assert_array_equal(value, trained[name])
    assert fresh.evaluate(x, y)["loss"] == pytest.approx(after["loss"])
    name = next(iter(trained))
    fresh.set_parameters({name: np.zeros_like(trained[name])})
    assert not fresh.parameters()[name].any()
    with pytest.raises(gopt.InvalidArgument, match="expected shape"):
        fresh.set_parameters({name: np.zeros(3, np.float32)})
    with pytest.raises(gopt.NotFound, match="no parameter named 'nope'"):
        fresh.set_parameters({"nope": np.zeros(3, np.float32)})
    assert session.profile()[0]["calls"] == 30


@requires_compiler
def test_bad_training_inputs_raise(mlp_mlir):
    session = gopt.TrainingSession(mlp_mlir)
    x = np.zeros((4, 1, 28, 28), np.float32)
    y = np.zeros(4, np.int64)
    with pytest.raises(gopt.InvalidArgument, match="inputs: expected dtype float32"):
        session.step(x.astype(np.float64), y)
    with pytest.raises(gopt.InvalidArgument, match=r"inputs: expected shape \[B,1,28,28\]"):
        session.step(np.zeros((4, 28, 28), np.float32), y)
    with pytest.raises(gopt.InvalidArgument, match="labels: expected dtype"):
        session.step(x, y.astype(np.float32))
    with pytest.raises(gopt.InvalidArgument, match="rows"):
        session.step(x, y[:3])
    with pytest.raises(gopt.Error, match="label 10"):
        session.step(x, np.full(4, 10, np.int64))
    with pytest.raises(gopt.InvalidArgument, match="no output named 'loss'"):
        plan = gopt.load(gopt.load(mlp_mlir).to_plan().serialize())
        gopt.TrainingSession(plan)
    # Still usable after the errors.
    assert np.isfinite(session.step(x, y))


@requires_compiler
@requires_torch
def test_mnist_cnn_trains_from_python(mnist_onnx):
    path, _ = mnist_onnx
    session = gopt.TrainingSession(gopt.load(path), batch_size=32)
    loader = session.data(DATA, batch_size=32, epochs=None)
    losses = [session.step(x, y) for (x, y), _ in zip(loader, range(15))]
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


# --- TFRecord, written here (no TensorFlow): tf.train.Example records in
# TFRecord framing with masked CRC-32C.

def _crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):  # a length-delimited field
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _example(pixels, label):
    image = _field(1, _field(1, bytes(pixels)))       # Feature.bytes_list
    label_feature = _field(3, _field(1, _varint(label)))  # Feature.int64_list
    entries = (_field(1, _field(1, b"image") + _field(2, image)) +
               _field(1, _field(1, b"label") + _field(2, label_feature)))
    return _field(1, entries)                          # Example.features


def test_data_loader_reads_tfrecords(tmp_path):
    import struct
    rng = np.random.default_rng(5)
    pixels = rng.integers(0, 256, (6, 4, 4), dtype=np.uint8)
    labels = [3, 1, 4, 1, 5, 9]
    path = tmp_path / "data.tfrecord"
    with open(path, "wb") as f:
        for p, y in zip(pixels, labels):
            record = _example(p.tobytes(), y)
            length = struct.pack("<Q", len(record))
            f.write(length + struct.pack("<I", _masked_crc(length)) + record +
                    struct.pack("<I", _masked_crc(record)))
    loader = gopt.DataLoader(f"tfrecord:{path}", batch_size=3, shuffle=False,
                             example_shape=(1, 4, 4))
    batches = list(loader)
    assert len(batches) == 2
    x = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    np.testing.assert_allclose(x[:, 0], pixels / 255.0, rtol=1e-6)
    assert y.tolist() == labels
    # A corrupted record is named when its batch is due.
    data = bytearray(path.read_bytes())
    data[40] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(gopt.Error):
        list(gopt.DataLoader(f"tfrecord:{path}", batch_size=3, shuffle=False,
                             example_shape=(1, 4, 4)))
