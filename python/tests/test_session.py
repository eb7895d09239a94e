"""gopt.InferenceSession: inputs/outputs, run, feeds checked by name,
profile and trace. Most tests run the plans in data/, so a runtime-only
build runs them too."""
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gopt
from conftest import conv_reference, requires_compiler


@pytest.fixture()
def relu_session(relu_plan):
    return gopt.InferenceSession(relu_plan)


def test_inputs_and_outputs(relu_session):
    (x,) = relu_session.get_inputs()
    (y,) = relu_session.get_outputs()
    assert (x.name, x.dtype, x.shape) == ("x", "float32", [None, 4])
    assert (y.name, y.dtype, y.shape) == ("y", "float32", [None, 4])


def test_run_and_dynamic_batch(relu_session):
    out_name = "y"
    for batch in (1, 3, 7, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 4), np.float32)
        (y,) = relu_session.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        (y2,) = relu_session.run([out_name], {"x": x})
        np.testing.assert_array_equal(y2, y)


def test_outputs_are_not_overwritten_by_the_next_run(relu_session):
    a = np.ones((2, 4), np.float32)
    (ya,) = relu_session.run(None, {"x": a})
    relu_session.run(None, {"x": 2 * a})
    np.testing.assert_array_equal(ya, a)
    assert ya.flags.writeable and ya.flags.c_contiguous


@requires_compiler
def test_model_object_and_threads(conv_mlir):
    model = gopt.load(conv_mlir).optimize()
    session = gopt.InferenceSession(model, threads=1, memory_limit=1 << 30)
    x = np.random.default_rng(0).standard_normal((3, 8, 8, 4), np.float32)
    (y,) = session.run(None, {"x": x})
    np.testing.assert_allclose(y, conv_reference(x), rtol=1e-5, atol=1e-6)
    assert session.memory()["total_bytes"] > 0


def test_reference_backend(conv_plan):
    session = gopt.InferenceSession(conv_plan, backend="reference")
    x = np.random.default_rng(2).standard_normal((1, 8, 8, 4), np.float32)
    (y,) = session.run(None, {"x": x})
    np.testing.assert_allclose(y, conv_reference(x), rtol=1e-5, atol=1e-6)


def test_wrong_dtype_names_the_input(relu_session):
    with pytest.raises(gopt.InvalidArgument,
                       match="feed 'x': expected dtype float32, got float64"):
        relu_session.run(None, {"x": np.zeros((1, 4))})
    with pytest.raises(gopt.InvalidArgument, match="feed 'x'.*int64"):
        relu_session.run(None, {"x": [[1, 2, 3, 4]]})


def test_wrong_rank_and_dimension(relu_session):
    with pytest.raises(gopt.InvalidArgument,
                       match=r"feed 'x': expected rank 2 \(shape \[\?,4\]\), "
                             r"got rank 1"):
        relu_session.run(None, {"x": np.zeros(4, np.float32)})
    with pytest.raises(gopt.InvalidArgument,
                       match="feed 'x': dimension 1 is 5, the model expects 4"):
        relu_session.run(None, {"x": np.zeros((1, 5), np.float32)})


def test_unknown_and_missing_names(relu_session):
    with pytest.raises(gopt.NotFound, match="feed 'z': the model has no "
                                            "input named 'z' \\(inputs: 'x'\\)"):
        relu_session.run(None, {"x": np.zeros((1, 4), np.float32),
                                "z": np.zeros(1, np.float32)})
    with pytest.raises(gopt.InvalidArgument, match="missing feed for input 'x'"):
        relu_session.run(None, {})
    with pytest.raises(gopt.NotFound, match="output 'nope'"):
        relu_session.run(["nope"], {"x": np.zeros((1, 4), np.float32)})
    with pytest.raises(gopt.InvalidArgument, match="expected a numpy array"):
        relu_session._session.run([], {"x": "text"})


def test_fortran_and_strided_arrays_are_copied(conv_plan):
    session = gopt.InferenceSession(conv_plan)
    base = np.random.default_rng(3).standard_normal((2, 8, 8, 8), np.float32)
    strided = base[:, :, :, ::2]  # non-contiguous view
    fortran = np.asfortranarray(base[:, :, :, :4])
    for x in (strided, fortran):
        assert not x.flags.c_contiguous
        (y,) = session.run(None, {"x": x})
        np.testing.assert_allclose(y, conv_reference(np.ascontiguousarray(x)),
                                   rtol=1e-5, atol=1e-6)


def test_runs_from_threads_in_parallel(conv_plan):
    session = gopt.InferenceSession(conv_plan)
    xs = [np.random.default_rng(i).standard_normal((2, 8, 8, 4), np.float32)
          for i in range(8)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(5):
            (results[i],) = session.run(None, {"x": xs[i]})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, y in zip(xs, results):
        np.testing.assert_allclose(y, conv_reference(x), rtol=1e-5, atol=1e-6)


def test_profile_and_trace(conv_plan, tmp_path):
    session = gopt.InferenceSession(gopt.load(conv_plan))
    x = np.zeros((1, 8, 8, 4), np.float32)
    trace = tmp_path / "trace.json"
    rows = session.profile({"x": x}, iterations=5, trace=trace)
    assert rows and rows[0]["calls"] == 5
    assert {"name", "kind", "device", "implementation", "total_ms", "mean_ms",
            "min_run_ms", "share"} <= set(rows[0])
    # One call a run: the least run is no more than the mean, and positive.
    assert all(0 < r["min_run_ms"] <= r["mean_ms"] * (1 + 1e-9)
               for r in rows if r["calls"] == 5 and r["total_ms"] > 0)
    assert abs(sum(r["share"] for r in rows) - 1) < 1e-6
    # The conv's arithmetic: 2 * |output| * |filter| / output channels.
    conv = [r for r in rows if r["kind"].startswith("conv2d")]
    assert conv and conv[0]["flops"] > 0
    events = json.loads(trace.read_text())["traceEvents"]
    assert events[0]["name"] == "step"
    ops = [e for e in events[1:] if e["ph"] == "X"]
    assert {e["cat"] for e in ops} == {r["kind"] for r in rows}
    # Tracks are named (metadata events): the ops' is "ops".
    assert {"name": "ops"} in [e["args"] for e in events if e["ph"] == "M"]


def test_memory_limit_too_small_raises(conv_plan):
    with pytest.raises(gopt.Error):
        session = gopt.InferenceSession(conv_plan, memory_limit=64)
        session.run(None, {"x": np.zeros((64, 8, 8, 4), np.float32)})


def test_bad_backend(relu_plan):
    with pytest.raises(gopt.Error, match="backend"):
        gopt.InferenceSession(relu_plan, backend="tpu")


def test_the_interpreter_survives_every_bad_input(relu_plan, conv_plan,
                                                  tmp_path):
    """Every bad input of this file in a fresh interpreter, which must end
    normally."""
    truncated = tmp_path / "t.gplan"
    truncated.write_bytes(open(conv_plan, "rb").read()[:-10])
    script = textwrap.dedent(f"""
        import numpy as np, gopt
        s = gopt.InferenceSession({relu_plan!r})
        bad = [np.zeros((1, 4)), np.zeros(4, np.float32),
               np.zeros((1, 5), np.float32), np.zeros((0, 4), np.float32),
               np.zeros((1, 4), np.float32)[:, ::2], "text", None, object()]
        caught = 0
        for value in bad:
            try:
                s.run(None, {{"x": value}})
            except (gopt.Error, ValueError, TypeError):
                caught += 1
        for call in (lambda: s.run(None, {{}}),
                     lambda: s.run(None, {{"y": np.zeros((1, 4), np.float32)}}),
                     lambda: gopt.load({str(truncated)!r}),
                     lambda: gopt.load(b"\\x00\\x01garbage"),
                     lambda: gopt.load(b""),
                     lambda: gopt.InferenceSession(b"not a model")):
            try:
                call()
            except gopt.Error:
                caught += 1
        print("survived", caught)
    """)
    env = dict(__import__("os").environ)
    env["PYTHONPATH"] = ":".join(p for p in sys.path if p)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "survived" in result.stdout
    assert int(result.stdout.split()[-1]) >= 12, result.stdout


@pytest.mark.skipif(gopt.has_compiler(), reason="what a runtime-only build does")
def test_without_the_compiler_graphs_raise_unimplemented(relu_plan, tmp_path):
    graph = tmp_path / "relu.mlir"
    graph.write_text("func.func @main() { return }")
    for call in (lambda: gopt.load(str(graph)),
                 lambda: gopt.InferenceSession(str(graph)),
                 lambda: gopt.load(relu_plan).optimize(),
                 gopt.available_passes):
        with pytest.raises(gopt.Unimplemented):
            call()


def test_gopt_and_onednn_share_one_openmp_pool(conv_plan):
    # _gopt links libomp ahead of libdnnl (whose own dependency is libgomp):
    # loaded by Python with RTLD_LOCAL, both must still fork onto one pool,
    # else a second pool's threads would spin against the first's.
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no worker threads to count")
    script = textwrap.dedent("""
        import os, sys
        sys.path[:0] = %r
        import numpy as np
        import gopt
        def threads():
            return len(os.listdir("/proc/self/task"))
        before = threads()
        session = gopt.InferenceSession(%r, threads=2)
        x = np.ones((64, 8, 8, 4), np.float32)
        for _ in range(3):
            session.run(None, {"x": x})
        print(threads() - before)
    """ % (sys.path, conv_plan))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    # One worker beside the caller's thread; two runtimes would add two.
    assert int(out) == 1, "%s threads added by a 2-thread session" % out
