#!/usr/bin/python3
"""Writes an ONNX model whose logits go through Einsum in the forms the
importer lowers differently: a batched diagonal ("bii->bi", a mask and a
sum), a contraction with a constant ("bij,jk->bik", a matmul) and one of
two computed operands ("bij,bkj->bik"). W (the MatMul's weight) is the
parameter whose gradient reaches through all three (grad-check-einsum.test).

  make-einsum-model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(
        (rng.standard_normal((4, 9)) * 0.4).astype(np.float32), "W")
    v = numpy_helper.from_array(
        (rng.standard_normal((3, 2)) * 0.5).astype(np.float32), "V")
    shape = numpy_helper.from_array(np.array([-1, 3, 3], np.int64), "shape")
    axes = numpy_helper.from_array(np.array([2], np.int64), "axes")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("Tanh", ["h"], ["t"]),
        helper.make_node("Reshape", ["t", "shape"], ["a"]),
        helper.make_node("Einsum", ["a"], ["diag"], equation="bii->bi"),
        helper.make_node("Einsum", ["a", "V"], ["av"], equation="bij,jk->bik"),
        helper.make_node("Einsum", ["a", "a"], ["aa"], equation="bij,bkj->bik"),
        helper.make_node("ReduceSum", ["av", "axes"], ["avs"], keepdims=0),
        helper.make_node("ReduceSum", ["aa", "axes"], ["aas"], keepdims=0),
        helper.make_node("Add", ["diag", "avs"], ["s"]),
        helper.make_node("Add", ["s", "aas"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "einsum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 3])],
        [w, v, shape, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
