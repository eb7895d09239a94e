"""Writes GlobalLpPool and LpNormalization models with numpy's expected
outputs (ONNX's definitions). `python3 onnx-lp-norm-pool.test.py OUT`."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(9)
    x4 = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    x3 = rng.standard_normal((2, 3, 7)).astype(np.float32)
    m = rng.standard_normal((3, 4, 5)).astype(np.float32)
    np.save(os.path.join(out, "x4.npy"), x4)
    np.save(os.path.join(out, "x3.npy"), x3)
    np.save(os.path.join(out, "m.npy"), m)
    want = {
        "gl2": np.sqrt((x4 ** 2).sum(axis=(2, 3), keepdims=True)),
        "gl1": np.abs(x4).sum(axis=(2, 3), keepdims=True),
        "gl3": (np.abs(x3) ** 3).sum(axis=2, keepdims=True) ** (1 / 3),
        "n2": m / np.sqrt((m ** 2).sum(axis=-1, keepdims=True)),
        "n1": m / np.abs(m).sum(axis=1, keepdims=True),
    }
    nodes = [
        helper.make_node("GlobalLpPool", ["x4"], ["gl2"], name="gl2"),
        helper.make_node("GlobalLpPool", ["x4"], ["gl1"], p=1, name="gl1"),
        helper.make_node("GlobalLpPool", ["x3"], ["gl3"], p=3, name="gl3"),
        helper.make_node("LpNormalization", ["m"], ["n2"], name="n2"),
        helper.make_node("LpNormalization", ["m"], ["n1"], p=1, axis=1,
                         name="n1"),
    ]
    vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
    outputs = [vi(k, list(v.shape)) for k, v in want.items()]
    for k, v in want.items():
        np.save(os.path.join(out, "want_" + k + ".npy"), v.astype(np.float32))
    graph = helper.make_graph(nodes, "lp", [vi("x4", [2, 3, 5, 4]),
                                            vi("x3", [2, 3, 7]),
                                            vi("m", [3, 4, 5])], outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(out, "lp.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    bad = helper.make_graph(
        [helper.make_node("LpNormalization", ["m"], ["y"], p=3, name="p3")],
        "bad", [vi("m", [3, 4])], [vi("y", [3, 4])])
    model = helper.make_model(bad, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(out, "lpnorm_p3.onnx"), "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
