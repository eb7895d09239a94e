"""gopt.load, Model.optimize/save/report, str(model), available_passes."""
import os

import numpy as np
import pytest

import gopt
from conftest import RELU_MLIR, conv_reference, requires_compiler

pytestmark = requires_compiler


def test_load_mlir_path_and_bytes(relu_mlir):
    for model in (gopt.load(relu_mlir), gopt.load(RELU_MLIR.encode()),
                  gopt.load(open(relu_mlir, "rb").read(), format="mlir")):
        assert "gopt.relu" in str(model)
        assert model.inputs() == [{"name": "x", "dtype": "float32",
                                   "shape": [None, 4]}]


def test_load_pathlike(relu_mlir):
    import pathlib
    assert "gopt.relu" in str(gopt.load(pathlib.Path(relu_mlir)))


def test_save_and_reload_every_format(relu_mlir, tmp_path):
    model = gopt.load(relu_mlir)
    x = np.array([[-1, 2, -3, 4]], np.float32)
    for ext in ("mlir", "mlirbc", "onnx", "gplan"):
        path = tmp_path / f"relu.{ext}"
        model.save(path)
        reloaded = gopt.load(str(path))
        assert reloaded.is_plan == (ext == "gplan")
        (y,) = gopt.InferenceSession(reloaded).run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_to_onnx_bytes_load_back(relu_mlir):
    data = gopt.load(relu_mlir).to_onnx()
    assert isinstance(data, bytes)
    model = gopt.load(data)  # guessed: ONNX
    assert "gopt.relu" in str(model)


def test_to_onnx_opset(tmp_path):
    # Mish is ONNX opset 18: chosen by default, refused when pinned below.
    path = tmp_path / "mish.mlir"
    path.write_text(
        'func.func @main(%x: tensor<2x4xf32> {gopt.name = "x"}) -> tensor<2x4xf32> {\n'
        "  %y = gopt.mish %x : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
        "  return %y : tensor<2x4xf32>\n}\n")
    model = gopt.load(str(path))
    onnx = pytest.importorskip("onnx")
    assert onnx.load_from_string(model.to_onnx()).opset_import[0].version == 18
    assert onnx.load_from_string(model.to_onnx(opset=19)).opset_import[0].version == 19
    with pytest.raises(gopt.Error, match="Mish needs opset 18"):
        model.to_onnx(opset=14)
    with pytest.raises(gopt.Error, match="expected 14 to 21"):
        model.to_onnx(opset=13)


def test_optimize_reports_each_pass(conv_mlir):
    model = gopt.load(conv_mlir)
    assert model.optimize(target="cpu") is model
    report = model.report()
    passes = {r["pass"] for r in report}
    assert {"gopt-strip-debug-ops", "gopt-fuse-conv-bias-activation"} <= passes
    strip = [r for r in report if r["pass"] == "gopt-strip-debug-ops"][0]
    assert strip["message"].startswith("removed 1 debug op")
    assert "gopt.identity" not in str(model)
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 4), np.float32)
    (y,) = gopt.InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(y, conv_reference(x), rtol=1e-5, atol=1e-6)


def test_optimize_with_passes_string_and_list(conv_mlir):
    model = gopt.load(conv_mlir).optimize(passes="gopt-strip-debug-ops")
    assert "gopt.identity" not in str(model)
    assert "gopt.bias_add" in str(model)
    model = gopt.load(conv_mlir).optimize(
        passes=["gopt-strip-debug-ops", "gopt-fuse-conv-bias-activation"])
    assert "gopt.bias_add" not in str(model)
    model = gopt.load(conv_mlir).optimize(
        passes="builtin.module(func.func(gopt-strip-debug-ops))")
    assert "gopt.identity" not in str(model)
    model = gopt.load(conv_mlir).optimize(
        passes="func.func(gopt-strip-debug-ops),cse")
    assert "gopt.identity" not in str(model)


def test_optimize_precision_and_layout(conv_mlir):
    model = gopt.load(conv_mlir).optimize(target="cpu", precision="bf16",
                                          layout="NCHW")
    assert "bf16" in str(model)
    x = np.random.default_rng(1).standard_normal((1, 8, 8, 4), np.float32)
    (y,) = gopt.InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(y, conv_reference(x), rtol=0.05, atol=0.05)


def test_bad_pipeline_raises_and_keeps_graph(conv_mlir):
    model = gopt.load(conv_mlir)
    before = model.ir()
    with pytest.raises(gopt.InvalidArgument, match="no-such-pass"):
        model.optimize(passes="no-such-pass")
    with pytest.raises(gopt.InvalidArgument, match="unknown target 'tpu'"):
        model.optimize(target="tpu")
    assert model.ir() == before


def test_copy_is_independent(conv_mlir):
    model = gopt.load(conv_mlir)
    copy = model.copy().optimize()
    assert "gopt.identity" in str(model)
    assert "gopt.identity" not in str(copy)


def test_available_passes():
    passes = {p["name"]: p for p in gopt.available_passes()}
    assert passes["gopt-optimize"]["kind"] == "pipeline"
    assert any(o.startswith("target") for o in passes["gopt-optimize"]["options"])
    assert passes["gopt-fuse-batch-norm"]["kind"] == "pass"
    assert passes["canonicalize"]["description"]
    # Every listed name is accepted by optimize(passes=...).
    model = gopt.load(RELU_MLIR.encode())
    model.optimize(passes=["gopt-fold-constants", "canonicalize", "cse"])


def test_load_errors(tmp_path, relu_mlir):
    with pytest.raises(gopt.NotFound, match="no-such.onnx"):
        gopt.load(str(tmp_path / "no-such.onnx"))
    with pytest.raises(gopt.InvalidArgument, match="unknown model file type"):
        gopt.load(relu_mlir.replace(".mlir", ".txt"))
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {")
    with pytest.raises(gopt.Error, match="bad.mlir:1:"):
        gopt.load(str(bad))


def test_truncated_onnx_raises(relu_mlir, tmp_path):
    data = gopt.load(relu_mlir).to_onnx()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(gopt.Error, match="truncated.onnx"):
        gopt.load(str(path))
    with pytest.raises(gopt.Error):
        gopt.load(data[: len(data) // 2], format="onnx")


def test_truncated_gplan_raises(conv_mlir, tmp_path):
    # A plan ends with its constants: a cut download ends inside them.
    path = tmp_path / "conv.gplan"
    gopt.load(conv_mlir).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 10])
    with pytest.raises(gopt.Error, match="conv.gplan.*truncated"):
        gopt.load(str(path))
    with pytest.raises(gopt.Error):
        gopt.InferenceSession(str(path))


def test_save_unknown_extension(relu_mlir, tmp_path):
    with pytest.raises(gopt.InvalidArgument, match="unknown file type"):
        gopt.load(relu_mlir).save(tmp_path / "x.bin")
    plan_path = tmp_path / "relu.gplan"
    gopt.load(relu_mlir).save(plan_path)
    with pytest.raises(gopt.Unimplemented):
        gopt.load(str(plan_path)).optimize()


def test_errors_are_builtin_subclasses():
    assert issubclass(gopt.InvalidArgument, ValueError)
    assert issubclass(gopt.NotFound, LookupError)
    assert issubclass(gopt.Unimplemented, NotImplementedError)
    assert issubclass(gopt.DataLoss, gopt.Error)
