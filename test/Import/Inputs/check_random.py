"""onnx-random.test: writes argv[1]/random.onnx (RandomNormalLike,
RandomUniform, RandomNormal of f64, Bernoulli, Multinomial, Dropout in
training mode with its mask), or with 'check' reads the
outputs gopt-run wrote to argv[1]/out and prints each statistic against
what the op's distribution gives (5 standard errors)."""
import os
import sys

import numpy as np

d = sys.argv[1]
LOGITS = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.0001, 0.2, 0.0999]], np.float32))
if sys.argv[2:] != ["check"]:
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("RandomNormalLike", ["x"], ["n"], mean=2.0, scale=3.0, seed=5.0),
             helper.make_node("RandomUniform", [], ["u"], shape=[4000], low=-1.0, high=4.0),
             helper.make_node("RandomNormal", [], ["m"], shape=[4000], dtype=TensorProto.DOUBLE),
             helper.make_node("Bernoulli", ["p"], ["b"], dtype=TensorProto.INT32),
             helper.make_node("Multinomial", ["logits"], ["k"], sample_size=4000,
                              dtype=TensorProto.INT64),
             helper.make_node("Dropout", ["p", "ratio", "training"], ["dy", "dmask"])]
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "g", [vi("x", TensorProto.FLOAT, [100, 50]),
                                        vi("p", TensorProto.FLOAT, [4000]),
                                        vi("logits", TensorProto.FLOAT, [2, 4])],
                          [vi("n", TensorProto.FLOAT, [100, 50]), vi("u", TensorProto.FLOAT, [4000]),
                           vi("m", TensorProto.DOUBLE, [4000]), vi("b", TensorProto.INT32, [4000]),
                           vi("k", TensorProto.INT64, [2, 4000]),
                           vi("dy", TensorProto.FLOAT, [4000]), vi("dmask", TensorProto.BOOL, [4000])],
                          [helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.25]),
                           helper.make_tensor("training", TensorProto.BOOL, [], [True])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "random.onnx"))
    np.save(os.path.join(d, "p.npy"), np.linspace(0, 1, 4000, dtype=np.float32))
    np.save(os.path.join(d, "logits.npy"), LOGITS)
    sys.exit(0)


def report(name, value, want, sd):
    print(f"{name} {'ok' if abs(value - want) <= 5 * sd else f'BAD {value} vs {want}'}")


out = os.path.join(d, "out")
n = np.load(os.path.join(out, "n.npy"))
u = np.load(os.path.join(out, "u.npy"))
m = np.load(os.path.join(out, "m.npy"))
b = np.load(os.path.join(out, "b.npy"))
report("normal-like mean", n.mean(), 2.0, 3.0 / np.sqrt(n.size))
report("normal-like std", n.std(), 3.0, 3.0 / np.sqrt(2 * n.size))
print("uniform range", "ok" if u.min() >= -1 and u.max() < 4 else "BAD")
report("uniform mean", u.mean(), 1.5, 5 / np.sqrt(12 * u.size))
print("normal dtype", m.dtype)
report("normal mean", m.mean(), 0.0, 1 / np.sqrt(m.size))
print("bernoulli values", "ok" if set(np.unique(b)) <= {0, 1} and b.dtype == np.int32 else "BAD")
p = np.linspace(0, 1, 4000)
report("bernoulli ones", b.sum(), p.sum(), np.sqrt((p * (1 - p)).sum()))
k = np.load(os.path.join(out, "k.npy"))
print("multinomial values", "ok" if k.dtype == np.int64 and k.min() >= 0 and k.max() < 4 else "BAD")
probs = np.exp(LOGITS.astype(np.float64))
probs /= probs.sum(axis=1, keepdims=True)
worst = max(abs((k[r] == c).mean() - probs[r, c]) / np.sqrt(probs[r, c] * (1 - probs[r, c]) / k.shape[1] + 1e-12)
            for r in range(2) for c in range(4))
print("multinomial frequencies", "ok" if worst <= 5 else f"BAD ({worst:.1f} standard errors)")
dy = np.load(os.path.join(out, "dy.npy"))
dmask = np.load(os.path.join(out, "dmask.npy"))
p32 = np.linspace(0, 1, 4000, dtype=np.float32)
kept = np.isclose(dy, p32 / 0.75, rtol=1e-6) & dmask
print("dropout mask", "ok" if (kept | (~dmask & (dy == 0))).all() else "BAD")
report("dropout kept", dmask.mean(), 0.75, np.sqrt(0.75 * 0.25 / dmask.size))
