"""Writes ONNX models of the compositions the importer builds for
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Dropout's mask, Trilu
with k fed at run time and OneHot, with run-time (dynamic) dimensions the
node suite does not have, their inputs, and the outputs ONNX's own reference
functions (onnx.backend.test.case.node) compute, into the directory given.
Targets hold ignore_index (negative, and a class) and the weights differ per
class, so a mean that divided by the wrong count or weight sum would show."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
from onnx.backend.test.case.node.negativeloglikelihoodloss import \
    compute_negative_log_likelihood_loss
from onnx.backend.test.case.node.softmaxcrossentropy import softmaxcrossentropy

out = sys.argv[1]
rng = np.random.default_rng(11)
F, I32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL


def save(name, node, inputs, outputs, arrays):
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for key, value in arrays.items():
        np.save(os.path.join(out, f"{name}_{key}.npy"), value)


# NLL over [N, C, d1, d2] with N and d1 dynamic (two run-time dims: the
# class axis is inserted and dropped through a computed shape), weights,
# ignore_index -1, mean and none.
N, C, D1, D2 = 3, 5, 4, 2
x = rng.standard_normal((N, C, D1, D2)).astype(np.float32)
t = rng.integers(0, C, (N, D1, D2)).astype(np.int64)
t[0, 1, 0] = t[2, 3, 1] = t[1, 0, 0] = -1
w = np.array([0.5, 2.0, 1.0, 3.0, 0.25], np.float32)
for reduction, shape in (("mean", []), ("none", ["n", "d1", D2])):
    save(f"nll_{reduction}",
         helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["loss"],
                          reduction=reduction, ignore_index=-1),
         [("x", F, ["n", C, "d1", D2]), ("t", I64, ["n", "d1", D2]), ("w", F, [C])],
         [("loss", F, shape)],
         {"x": x, "t": t, "w": w,
          "loss": np.asarray(compute_negative_log_likelihood_loss(
              x, t, weight=w, reduction=reduction, ignore_index=-1),
              np.float32)})

# SoftmaxCrossEntropyLoss with an i32 target, weights, ignore_index 2 (a
# class), sum and mean, and the log_prob output; N dynamic.
t32 = rng.integers(0, C, (N, D1)).astype(np.int32)
t32[0, 0] = t32[1, 2] = 2
x3 = rng.standard_normal((N, C, D1)).astype(np.float32)
for reduction in ("sum", "mean"):
    loss, log_prob = softmaxcrossentropy(x3, t32, weight=w, reduction=reduction,
                                         ignore_index=2, get_log_prob=True)
    save(f"sce_{reduction}",
         helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["loss", "log_prob"],
                          reduction=reduction, ignore_index=2),
         [("x", F, ["n", C, D1]), ("t", I32, ["n", D1]), ("w", F, [C])],
         [("loss", F, []), ("log_prob", F, ["n", C, D1])],
         {"x": x3, "t": t32, "w": w, "loss": np.asarray(loss, np.float32),
          "log_prob": log_prob.astype(np.float32)})

# Dropout in inference with a dynamic shape and the ratio fed at run time:
# y is x, the mask all true.
xd = rng.standard_normal((2, 3, 4)).astype(np.float32)
save("dropout_mask",
     helper.make_node("Dropout", ["x", "r"], ["y", "mask"]),
     [("x", F, ["a", 3, "b"]), ("r", F, [])],
     [("y", F, ["a", 3, "b"]), ("mask", BOOL, ["a", 3, "b"])],
     {"x": xd, "r": np.array(0.3, np.float32), "y": xd,
      "mask": np.ones(xd.shape, bool)})

# Trilu with k fed at run time over a batch of matrices.
xt = rng.standard_normal((2, 4, 5)).astype(np.float32)
for upper, k in ((1, -1), (0, 2)):
    rows, cols = np.indices((4, 5))
    keep = (cols - rows >= k) if upper else (cols - rows <= k)
    save(f"trilu_{upper}",
         helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper),
         [("x", F, [2, 4, 5]), ("k", I64, [])], [("y", F, [2, 4, 5])],
         {"x": xt, "k": np.array(k, np.int64), "y": np.where(keep, xt, 0).astype(np.float32)})

# OneHot along a middle axis with a dynamic batch, negative and
# out-of-range indices, i32 values.
idx = np.array([[0, -1, 3], [4, -6, 2]], np.int64)
depth = 5
on_off = np.array([-2, 7], np.int32)
expected = np.full((2, depth, 3), -2, np.int32)
for i in range(2):
    for j in range(3):
        v = idx[i, j] + depth if idx[i, j] < 0 else idx[i, j]
        if 0 <= v < depth:
            expected[i, v, j] = 7
depth_init = helper.make_tensor("depth", I64, [], [depth])
graph = helper.make_graph(
    [helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=1)], "onehot",
    [helper.make_tensor_value_info("i", I64, ["n", 3]),
     helper.make_tensor_value_info("v", I32, [2])],
    [helper.make_tensor_value_info("y", I32, ["n", depth, 3])], [depth_init])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
m.ir_version = 7
with open(os.path.join(out, "onehot.onnx"), "wb") as f:
    f.write(m.SerializeToString())
for key, value in (("i", idx), ("v", on_off), ("y", expected)):
    np.save(os.path.join(out, f"onehot_{key}.npy"), value)
