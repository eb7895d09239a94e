"""Writes the Einsum models of test/Import/onnx-einsum.test into argv[1]:
e<N>.onnx with inputs e<N>_x<i>.npy and numpy's result e<N>_y.npy, plus
the refused forms."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
CASES = [
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("bi,bi->b", [(2, 5), (2, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bik,bjk->bij", [(2, 3, 4), (2, 5, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),
    ("bij->b", [(2, 3, 4)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [("b", 2, "q", 8), ("b", 2, "k", 8)]),
    ("ii->i", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("iji,jk->ik", [(3, 4, 3), (4, 5)]),
]
RUN_SHAPES = {13: [(3, 2, 4, 8), (3, 2, 6, 8)]}
rng = np.random.default_rng(0)


def save(name, eq, shapes, y_shape=None, opset=12):
    ins = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(s))
           for i, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [f"x{i}" for i in range(len(shapes))], ["y"],
                            name="ein", equation=eq)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)
    graph = helper.make_graph([node], "g", ins, [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name))


for n, (eq, shapes) in enumerate(CASES):
    concrete = RUN_SHAPES.get(n, shapes)
    xs = [rng.standard_normal(s).astype(np.float32) for s in concrete]
    y = np.array(np.einsum(eq, *xs), order="C")  # not ascontiguousarray: it makes a 0-d result 1-D
    save(f"e{n}.onnx", eq, shapes, [f"y{i}" for i in range(y.ndim)])
    for i, x in enumerate(xs):
        np.save(os.path.join(out, f"e{n}_x{i}.npy"), x)
    np.save(os.path.join(out, f"e{n}_y.npy"), y.astype(np.float32))

save("three.onnx", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], ["p", "q"])
save("diagonal.onnx", "ii->i", [("n", "n")], ["p"])
