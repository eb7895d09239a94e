"""Round trip of ONNX node-suite cases through gopt's exporter.

For each case directory: import model.onnx with gopt-translate, export it
again, check the export with ONNX's checker (full_check: shape inference
too), optionally require an op in the imported MLIR, and run the exported
model with gopt-run on the case's test_data_set_0, comparing with the
expected outputs. With --ort ORT_RUN_JS, ONNX Runtime (scripts/ort_run.js:
float32 outputs) runs the exported model too and its outputs are compared
with the expected ones. Prints "CASE: ok ... at opset N" (the opset the
export chose) per case, or "CASE: FAIL ..." and exits non-zero at the end.
With --rtol R, gopt-run compares with that relative tolerance (ONNX's
default for its node tests is 1e-3) instead of its own.
  export_roundtrip.py [--ort ORT_RUN_JS] [--rtol R] BIN_DIR OUT_DIR CASE_DIR[=REQUIRED_OP] ...
"""
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

argv = sys.argv[1:]
ort_run = None
rtol = []
while argv[0] in ("--ort", "--rtol"):
    if argv[0] == "--ort":
        ort_run = argv[1]
    else:
        rtol = ["--rtol", argv[1]]
    argv = argv[2:]
bin_dir, out_dir, cases = argv[0], argv[1], argv[2:]
os.makedirs(out_dir, exist_ok=True)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(args[0])}: {r.stderr.strip()}")
    return r.stdout


def npy(pb, path):
    t = onnx.TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    np.save(path, numpy_helper.to_array(t).copy(order="C"))
    return t.name


def close(got, want, rtol=1e-4):
    # Absolute error relative to the output's scale: a DFT's near-zero
    # bins carry the rounding of its large sums.
    atol = rtol / 10 * max(1.0, float(np.abs(want).max(initial=0)))
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)


failed = 0
for spec in cases:
    case, _, required = spec.partition("=")
    name = os.path.basename(case)
    tmp = os.path.join(out_dir, name)
    os.makedirs(tmp, exist_ok=True)
    try:
        mlir = os.path.join(tmp, "model.mlir")
        exported = os.path.join(tmp, "exported.onnx")
        run([f"{bin_dir}/gopt-translate", "--import-onnx",
             os.path.join(case, "model.onnx"), "-o", mlir])
        if required and required not in open(mlir).read():
            raise RuntimeError(f"the import has no {required}")
        run([f"{bin_dir}/gopt-translate", "--export-onnx", mlir, "-o", exported])
        opset = next(o.version for o in onnx.load(exported).opset_import if o.domain in ("", "ai.onnx"))
        # Python's onnx (1.12) knows opsets up to 17; the exporter checks
        # later ones against gopt's own schemas.
        if opset <= onnx.defs.onnx_opset_version():
            onnx.checker.check_model(onnx.load(exported), full_check=True)
        model = onnx.load(os.path.join(case, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        data = os.path.join(case, "test_data_set_0")
        args = [f"{bin_dir}/gopt-run", exported] + rtol
        feeds, expected = [], {}
        for i, pb in enumerate(sorted(glob.glob(os.path.join(data, "input_*.pb")))):
            path = os.path.join(tmp, f"in{i}.npy")
            feeds += ["--input", f"{npy(pb, path) or inputs[i]}={path}"]
        for i, pb in enumerate(sorted(glob.glob(os.path.join(data, "output_*.pb")))):
            path = os.path.join(tmp, f"out{i}.npy")
            expected[npy(pb, path) or model.graph.output[i].name] = path
            args += ["--compare-npy", f"{list(expected)[-1]}={path}"]
        out = run(args + feeds)
        bad = [l for l in out.splitlines() if l.startswith("compare") and not l.endswith(": ok")]
        if bad or "compare" not in out:
            raise RuntimeError("; ".join(bad) or "nothing compared")
        if ort_run:
            ort_dir = os.path.join(tmp, "ort")
            run(["node", ort_run, exported] + feeds + ["--output-dir", ort_dir])
            original = None  # ONNX Runtime's outputs for the original model
            for output, path in expected.items():
                got = np.load(os.path.join(ort_dir, output + ".npy"))
                want = np.load(path)
                if close(got, want):
                    continue
                # Where ONNX Runtime strays from the suite's values beyond
                # these tolerances, it must stray alike on the original.
                if original is None:
                    original = os.path.join(tmp, "ort-original")
                    run(["node", ort_run, os.path.join(case, "model.onnx")] +
                        feeds + ["--output-dir", original])
                if not close(got, np.load(os.path.join(original, output + ".npy")), 1e-6):
                    raise RuntimeError(f"ONNX Runtime's {output} differs")
        print(f"{name}: ok" + (" (gopt-run, ONNX Runtime)" if ort_run else "") + f" at opset {opset}")
    except Exception as e:  # one line per case, then the next case
        failed += 1
        print(f"{name}: FAIL {str(e).splitlines()[0] if str(e) else type(e).__name__}")
sys.exit(1 if failed else 0)
