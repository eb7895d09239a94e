#!/usr/bin/python3
"""Writes ResNet-18-shaped TensorFlow 1.x GraphDefs for the pass tests.

Run with Debian's /usr/bin/python3 (python3-protobuf, python3-numpy):
`scripts/make_tf_resnet.py [OUT_DIR]`, default test/Transforms/Inputs. The
outputs are committed, so the tests need no Python.

The graphs are written node by node the way a frozen TF 1.x graph of
tf.layers code looks (NHWC, variables frozen to Const + Identity "read"):

- resnet18_nhwc.pb: inference. Placeholder [?, 64, 64, 3]; stem Conv2D 7x7/2
  SAME, batch norm, Relu, MaxPool 3x3/2 SAME; four stages of two basic blocks
  (widths 12-24-48-96; the first block of stages 2-4 has a stride-2 conv
  written as explicit Pad + VALID, as TF's official ResNet `fixed_padding`
  does, and a 1x1/2 projection shortcut with its own batch norm); residual
  Add; CheckNumerics after each stage; Mean over H, W; MatMul + BiasAdd;
  Softmax. Every batch norm is the unfused inference form
  `tf.layers.batch_normalization(fused=False, training=False)` writes from
  the moving statistics:
      add = moving_variance + eps; Rsqrt; mul = rsqrt * gamma;
      mul_1 = x * mul; mul_2 = moving_mean * mul; sub = beta - mul_2;
      add_1 = mul_1 + sub
- resnet18_nhwc_train.pb: the same topology (widths 8-16-32-64) with the
  training form: batch moments `Mean(x, [0,1,2])`, `StopGradient(mean)`,
  `Mean(SquaredDifference(x, StopGradient(mean)), [0,1,2])`, then the same
  arithmetic with the batch statistics.

Weights are random with a fixed seed; moving statistics are drawn so that
activations stay O(1) through the 18 layers.

The GraphDefs use the project's own schema, lib/Import/graph.proto, compiled
here with protoc.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "test", "Transforms", "Inputs")


def load_schema(tmp):
    # A file name of its own: other packages register a "graph.proto" in
    # protobuf's default pool.
    shutil.copy(os.path.join(ROOT, "lib", "Import", "graph.proto"),
                os.path.join(tmp, "gopt_tf_graph.proto"))
    subprocess.check_call(["protoc", "--python_out=" + tmp, "-I", tmp,
                           os.path.join(tmp, "gopt_tf_graph.proto")])
    sys.path.insert(0, tmp)
    import gopt_tf_graph_pb2
    return gopt_tf_graph_pb2


class Builder:
    TYPE_ATTRS = ("T", "dtype", "Tidx", "Tpaddings")

    def __init__(self, tf, seed):
        self.tf = tf
        self.g = tf.GraphDef()
        self.g.versions.producer = 27  # TF 1.15
        self.rng = np.random.default_rng(seed)

    def node(self, name, op, inputs=(), **attrs):
        n = self.g.node.add(name=name, op=op, input=list(inputs))
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int) and k in self.TYPE_ATTRS:
                a.type = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, bytes):
                a.s = v
            elif isinstance(v, list):
                a.list.i.extend(v)
            elif isinstance(v, self.tf.TensorShapeProto):
                a.shape.CopyFrom(v)
        return name

    def const(self, name, array):
        tf = self.tf
        dtype = tf.DT_FLOAT if array.dtype == np.float32 else tf.DT_INT32
        self.node(name, "Const", dtype=dtype)
        t = self.g.node[-1].attr["value"].tensor
        t.dtype = dtype
        for d in array.shape:
            t.tensor_shape.dim.add(size=d)
        t.tensor_content = array.tobytes()
        return name

    def variable(self, name, array):
        """A frozen variable: Const plus the Identity `read` TF 1.x adds."""
        self.const(name, array)
        return self.node(name + "/read", "Identity", [name], T=self.tf.DT_FLOAT)

    def placeholder(self, name, dims):
        shape = self.tf.TensorShapeProto()
        for d in dims:
            shape.dim.add(size=d)
        return self.node(name, "Placeholder", dtype=self.tf.DT_FLOAT, shape=shape)


def build_resnet18(tf, widths, training, seed, resolution=64, classes=10):
    b = Builder(tf, seed)
    F = tf.DT_FLOAT
    rng = b.rng

    def conv(prefix, x, cin, cout, k, stride, fixed_padding=True):
        # He initialisation keeps the activations O(1).
        w = (rng.standard_normal((k, k, cin, cout)) * np.sqrt(2.0 / (k * k * cin)))
        kernel = b.variable(prefix + "/kernel", w.astype(np.float32))
        if stride > 1 and k > 1 and fixed_padding:
            # TF official ResNet's fixed_padding: explicit pad, then VALID.
            total = k - 1
            lo, hi = total // 2, total - total // 2
            pads = np.array([[0, 0], [lo, hi], [lo, hi], [0, 0]], np.int32)
            b.const(prefix + "/Pad/paddings", pads)
            x = b.node(prefix + "/Pad", "Pad", [x, prefix + "/Pad/paddings"], T=F,
                       Tpaddings=tf.DT_INT32)
            padding = b"VALID"
        else:
            padding = b"SAME"
        return b.node(prefix + "/Conv2D", "Conv2D", [x, kernel], T=F,
                      strides=[1, stride, stride, 1], padding=padding,
                      data_format=b"NHWC", use_cudnn_on_gpu=True)

    def batch_norm(prefix, x, channels):
        bn = prefix + "/batch_normalization"
        gamma = b.variable(bn + "/gamma", (1.0 + 0.1 * rng.standard_normal(channels)).astype(np.float32))
        beta = b.variable(bn + "/beta", (0.1 * rng.standard_normal(channels)).astype(np.float32))
        eps = b.const(bn + "/batchnorm/add/y", np.array(1e-3, np.float32))
        if training:
            axes = b.const(bn + "/moments/mean/reduction_indices", np.array([0, 1, 2], np.int32))
            mean = b.node(bn + "/moments/mean", "Mean", [x, axes], T=F, Tidx=tf.DT_INT32,
                          keep_dims=True)
            stop = b.node(bn + "/moments/StopGradient", "StopGradient", [mean], T=F)
            sq = b.node(bn + "/moments/SquaredDifference", "SquaredDifference", [x, stop], T=F)
            vaxes = b.const(bn + "/moments/variance/reduction_indices",
                            np.array([0, 1, 2], np.int32))
            var = b.node(bn + "/moments/variance", "Mean", [sq, vaxes], T=F, Tidx=tf.DT_INT32,
                         keep_dims=True)
            # tf.nn.moments squeezes; tf.layers keeps [1,1,1,C] and works
            # with it: keep_dims statistics broadcast the same way.
        else:
            # Moving statistics of a trained net: means near the conv
            # outputs' mean, variances near their variance.
            mean = b.variable(bn + "/moving_mean", (0.05 * rng.standard_normal(channels)).astype(np.float32))
            var = b.variable(bn + "/moving_variance",
                             (1.0 + 0.2 * rng.random(channels)).astype(np.float32))
        add = b.node(bn + "/batchnorm/add", "Add", [var, eps], T=F)
        rsqrt = b.node(bn + "/batchnorm/Rsqrt", "Rsqrt", [add], T=F)
        mul = b.node(bn + "/batchnorm/mul", "Mul", [rsqrt, gamma], T=F)
        mul_1 = b.node(bn + "/batchnorm/mul_1", "Mul", [x, mul], T=F)
        mul_2 = b.node(bn + "/batchnorm/mul_2", "Mul", [mean, mul], T=F)
        sub = b.node(bn + "/batchnorm/sub", "Sub", [beta, mul_2], T=F)
        return b.node(bn + "/batchnorm/add_1", "Add", [mul_1, sub], T=F)

    def basic_block(prefix, x, cin, cout, stride):
        shortcut = x
        if stride != 1 or cin != cout:
            shortcut = conv(prefix + "/shortcut", x, cin, cout, 1, stride)
            shortcut = batch_norm(prefix + "/shortcut", shortcut, cout)
        y = conv(prefix + "/conv1", x, cin, cout, 3, stride)
        y = batch_norm(prefix + "/conv1", y, cout)
        y = b.node(prefix + "/Relu", "Relu", [y], T=F)
        y = conv(prefix + "/conv2", y, cout, cout, 3, 1)
        y = batch_norm(prefix + "/conv2", y, cout)
        y = b.node(prefix + "/add", "Add", [y, shortcut], T=F)
        return b.node(prefix + "/Relu_1", "Relu", [y], T=F)

    x = b.placeholder("input", [-1, resolution, resolution, 3])
    x = b.node("input/read", "Identity", [x], T=F)
    # The stem conv: 7x7/2 SAME (as tf.keras writes it; the stages use the
    # official models' explicit Pad + VALID).
    x = conv("resnet/conv0", x, 3, widths[0], 7, 2, fixed_padding=False)
    x = batch_norm("resnet/conv0", x, widths[0])
    x = b.node("resnet/Relu", "Relu", [x], T=F)
    x = b.node("resnet/max_pooling2d/MaxPool", "MaxPool", [x], T=F, ksize=[1, 3, 3, 1],
               strides=[1, 2, 2, 1], padding=b"SAME", data_format=b"NHWC")
    cin = widths[0]
    for stage, cout in enumerate(widths):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            x = basic_block("resnet/stage%d/block%d" % (stage + 1, block), x, cin, cout, stride)
            cin = cout
        x = b.node("resnet/stage%d/CheckNumerics" % (stage + 1), "CheckNumerics", [x], T=F,
                   message=b"stage %d" % (stage + 1))
    axes = b.const("resnet/Mean/reduction_indices", np.array([1, 2], np.int32))
    x = b.node("resnet/Mean", "Mean", [x, axes], T=F, Tidx=tf.DT_INT32, keep_dims=False)
    w = b.variable("resnet/dense/kernel",
                   (rng.standard_normal((cin, classes)) / np.sqrt(cin)).astype(np.float32))
    bias = b.variable("resnet/dense/bias", (0.1 * rng.standard_normal(classes)).astype(np.float32))
    x = b.node("resnet/dense/MatMul", "MatMul", [x, w], T=F, transpose_a=False, transpose_b=False)
    x = b.node("resnet/dense/BiasAdd", "BiasAdd", [x, bias], T=F, data_format=b"NHWC")
    x = b.node("resnet/dense/CheckNumerics", "CheckNumerics", [x], T=F, message=b"logits")
    b.node("probabilities", "Softmax", [x], T=F)
    return b.g


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tf = load_schema(tmp)
        for name, widths, training, seed in [
                ("resnet18_nhwc.pb", [12, 24, 48, 96], False, 18),
                ("resnet18_nhwc_train.pb", [8, 16, 32, 64], True, 19)]:
            g = build_resnet18(tf, widths, training, seed)
            data = g.SerializeToString()
            assert len(data) < 2 << 20, (name, len(data))
            with open(os.path.join(OUT, name), "wb") as f:
                f.write(data)
            print("%s: %d nodes, %d bytes" % (name, len(g.node), len(data)))


if __name__ == "__main__":
    main()
