"""Calibration, static int8 quantization and bf16 from Python."""
import json

import numpy as np
import pytest

import gopt
from conftest import conv_reference, requires_compiler, requires_torch

def test_calibrate_a_plan(conv_plan):
    """Calibration runs plans too (a runtime-only build has no graphs)."""
    ranges = gopt.calibrate(gopt.load(conv_plan), _batches(2), method="entropy")
    assert "x" in ranges.tensors and ranges.batches == 2


def _batches(n, batch=2):
    rng = np.random.default_rng(7)
    return [{"x": rng.standard_normal((batch, 8, 8, 4), np.float32)}
            for _ in range(n)]


@requires_compiler
def test_calibrate_minmax_matches_numpy(conv_mlir):
    model = gopt.load(conv_mlir).optimize()
    batches = _batches(3)
    ranges = gopt.calibrate(model, batches)
    assert ranges.method == "minmax" and ranges.batches == 3
    lo, hi, threshold = ranges.tensors["x"]
    all_x = np.concatenate([b["x"] for b in batches])
    assert lo == pytest.approx(all_x.min()) and hi == pytest.approx(all_x.max())
    assert threshold == pytest.approx(max(-all_x.min(), all_x.max()))
    doc = json.loads(ranges.to_json())
    assert doc["format"] == "gopt-calibration"


@requires_compiler
def test_calibrate_methods_and_arrays(conv_mlir):
    model = gopt.load(conv_mlir).optimize()
    arrays = [b["x"] for b in _batches(2)]  # one input: arrays alone
    for method in ("percentile", "entropy"):
        ranges = gopt.calibrate(model, arrays, method=method)
        assert ranges.method == method
        for lo, hi, threshold in ranges.tensors.values():
            assert 0 < threshold <= max(-lo, hi) + 1e-6
    with pytest.raises(gopt.InvalidArgument, match="unknown calibration method"):
        gopt.calibrate(model, arrays, method="median")
    with pytest.raises(gopt.NotFound, match="no input named 'y'"):
        gopt.calibrate(model, [{"x": arrays[0], "y": arrays[0]}])
    with pytest.raises(gopt.InvalidArgument, match="at least one batch"):
        gopt.calibrate(model, [])
    with pytest.raises(gopt.InvalidArgument, match=r"percentile in \(0, 100\]"):
        gopt.calibrate(model, arrays, method="percentile", percentile=120)


@requires_compiler
def test_quantize_static_int8(conv_mlir, tmp_path):
    model = gopt.load(conv_mlir).optimize()
    ranges = gopt.calibrate(model, _batches(4))
    ranges.save(tmp_path / "ranges.json")
    reloaded = gopt.CalibrationRanges.load(tmp_path / "ranges.json")
    assert reloaded.tensors.keys() == ranges.tensors.keys()
    model.quantize(reloaded)
    assert "gopt.quantize" in str(model)
    assert any(r["pass"] == "gopt-quantize" for r in model.report())
    x = _batches(1)[0]["x"]
    (y,) = gopt.InferenceSession(model).run(None, {"x": x})
    expected = conv_reference(x)
    # int8: within a few quantization steps of the f32 result.
    assert np.abs(y - expected).max() < 0.1 * np.abs(expected).max()


@requires_compiler
def test_quantize_missing_ranges_raise_or_fall_back(conv_mlir):
    model = gopt.load(conv_mlir).optimize()
    ranges = gopt.calibrate(model, _batches(2))
    tensors = dict(ranges.tensors)
    dropped = sorted(name for name in tensors if name != "x")[0]
    del tensors[dropped]
    doc = json.loads(ranges.to_json())
    del doc["tensors"][dropped]
    partial = gopt.CalibrationRanges("minmax", tensors, json.dumps(doc))
    with pytest.raises(gopt.InvalidArgument, match=f"'{dropped}'"):
        model.copy().quantize(partial)
    model.quantize(partial, fallback=True)
    assert any("f32" in r["message"] for r in model.report()
               if r["pass"] == "gopt-quantize" or not r["pass"])


@requires_compiler
@requires_torch
def test_bf16_mnist_close_to_f32(mnist_onnx):
    path, _ = mnist_onnx
    x = np.random.default_rng(3).standard_normal((2, 1, 28, 28), np.float32)
    (f32,) = gopt.InferenceSession(gopt.load(path).optimize()).run(
        None, {"input": x})
    bf16_model = gopt.load(path).optimize(precision="bf16")
    assert any(r["pass"] == "gopt-mixed-precision" for r in bf16_model.report())
    (bf16,) = gopt.InferenceSession(bf16_model).run(None, {"input": x})
    assert np.abs(bf16 - f32).max() < 0.05 * np.abs(f32).max() + 1e-3
