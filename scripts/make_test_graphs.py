#!/usr/bin/python3
"""Writes the small graph files the importer tests read.

Run with Debian's /usr/bin/python3 (python3-onnx, python3-protobuf,
python3-torch): `scripts/make_test_graphs.py [OUT_DIR]`, default
test/Import/Inputs. The outputs are committed, so the tests need no Python.

- lenet.onnx: a small LeNet exported by torch.onnx (Conv, Relu, MaxPool,
  Flatten, Gemm).
- onnx_*.onnx: one tiny model per mapped op family and per error, built with
  onnx.helper.
- resnet_block_nhwc.pb/.pbtxt: a ResNet block in NHWC with unfused batch norm
  (moments via Mean/SquaredDifference, then Rsqrt, Mul, Sub, Add), as
  tf.layers.batch_normalization(fused=False) writes it.
- onnx_qdq*.onnx: QuantizeLinear/DequantizeLinear (int8, zero point 0) around
  a Conv with a per-channel int8 weight, its input/expected-output arrays
  computed here with numpy (round half to even, saturate), and the forms
  gopt rejects (uint8, a non-zero zero point). `make_test_graphs.py qdq
  [OUT_DIR]` writes only these.
- image_nhwc.pbtxt: Keras' Conv2DTranspose as TensorFlow writes it
  (Conv2DBackpropInput with a constant input_sizes, SAME, stride 2, then
  BiasAdd), ResizeBilinear (half_pixel_centers) and ResizeNearestNeighbor
  (align_corners), with an input and the expected output computed here
  with numpy by TensorFlow's formulas. `make_test_graphs.py image
  [OUT_DIR]` writes only these.
- fused_nhwc.pbtxt: Grappler's fused ops (_FusedConv2D with BiasAdd/Relu,
  FusedBatchNorm/Relu, BiasAdd/LeakyRelu, BiasAdd/Elu;
  _FusedDepthwiseConv2dNative with BiasAdd/Relu6; _FusedMatMul with
  BiasAdd/Relu), with an input and the expected outputs computed here with
  numpy. `make_test_graphs.py fused [OUT_DIR]` writes only these.
- tf_ops_nhwc.pbtxt: what converted and Grappler-optimized graphs hold
  around those: a ResizeBilinear whose size is Shape -> StridedSlice -> Mul,
  StridedSlice with negative strides and every mask, Split, SplitV (-1),
  AddN, Pack, Unpack, a Reshape to Shape -> StridedSlice -> Pack, Range,
  Fill, SparseToDense, ZerosLike and OnesLike, with the expected outputs
  computed with numpy. `make_test_graphs.py tfops [OUT_DIR]` writes only
  these.
- training_nhwc.pbtxt: a training-style graph (Identity, CheckNumerics,
  FusedBatchNormV3 with is_training, StopGradient, BiasAdd, MatMul, Softmax).
GraphDefs are built with the project's own schema, lib/Import/graph.proto,
compiled here with protoc.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if a not in ("qdq", "image", "fused", "tfops")]
OUT = ARGS[0] if ARGS else os.path.join(ROOT, "test", "Import", "Inputs")
RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32) * 0.1


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    """Outputs given with shape None get the type shape inference finds."""
    graph = helper.make_graph(nodes, name, inputs, [], initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset >= 13 else 6
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    for out in outputs:
        if out.type.HasField("tensor_type") or out.name not in inferred:
            m.graph.output.append(out)
        else:
            m.graph.output.append(inferred[out.name])
    return m


def vi(name, shape, elem=TensorProto.FLOAT):
    if shape is None:
        return onnx.ValueInfoProto(name=name)
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


def lenet():
    import torch
    from torch import nn

    torch.manual_seed(1234)

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(1, 4, 5)
            self.c2 = nn.Conv2d(4, 8, 5)
            self.f1 = nn.Linear(8 * 4 * 4, 32)
            self.f2 = nn.Linear(32, 10)

        def forward(self, x):
            x = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
            x = nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
            x = torch.flatten(x, 1)
            return self.f2(torch.relu(self.f1(x)))

    path = os.path.join(OUT, "lenet.onnx")
    torch.onnx.export(LeNet().eval(), torch.zeros(1, 1, 28, 28), path,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13)
    onnx.checker.check_model(onnx.load(path))


def onnx_ops():
    X4 = vi("x", ["N", 3, 8, 8])
    # Conv: SAME_LOWER becomes explicit pads; groups and dilations kept.
    save(model([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv",
                                 auto_pad="SAME_LOWER", strides=[2, 2], group=3)],
               [X4], [vi("y", None)], [init("w", rand(6, 1, 4, 4)), init("b", rand(6))]),
         "onnx_conv.onnx")
    save(model([helper.make_node("BatchNormalization", ["x", "s", "o", "m", "v"], ["y"],
                                 name="bn", epsilon=1e-5)],
               [X4], [vi("y", None)],
               [init(n, rand(3) + 1) for n in "somv"]), "onnx_batchnorm.onnx")
    save(model([helper.make_node("Gemm", ["a", "w", "c"], ["y"], name="fc", transB=1,
                                 alpha=0.5, beta=2.0)],
               [vi("a", ["N", 4])], [vi("y", None)],
               [init("w", rand(5, 4)), init("c", rand(5))]), "onnx_gemm.onnx")
    save(model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
               [vi("a", [2, "M", 4]), vi("b", [4, 3])], [vi("y", None)]), "onnx_matmul.onnx")
    # Clip: opset 11+ bounds are constant inputs; [0, 6] is relu6.
    save(model([helper.make_node("Clip", ["x", "lo", "hi"], ["r6"], name="relu6"),
                helper.make_node("Clip", ["x", "lo2", "hi"], ["c"], name="clip"),
                helper.make_node("Clip", ["x", "lo"], ["r"], name="relu")],
               [X4], [vi("r6", None), vi("c", None), vi("r", None)],
               [init("lo", np.array(0, np.float32)), init("hi", np.array(6, np.float32)),
                init("lo2", np.array(-1, np.float32))]), "onnx_clip.onnx")
    save(model([helper.make_node("MaxPool", ["x"], ["mp"], name="maxpool", kernel_shape=[3, 3],
                                 strides=[2, 2], pads=[1, 0, 1, 0], ceil_mode=1),
                helper.make_node("AveragePool", ["x"], ["ap"], name="avgpool", kernel_shape=[2, 2],
                                 auto_pad="SAME_UPPER", count_include_pad=1),
                helper.make_node("GlobalAveragePool", ["x"], ["gap"], name="gap")],
               [X4], [vi("mp", None), vi("ap", None), vi("gap", None)]), "onnx_pool.onnx")
    save(model([helper.make_node(op, ["a", "b"], [op.lower()], name=op.lower())
                for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]],
               [vi("a", ["N", 4]), vi("b", [4])],
               [vi(op.lower(), None) for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]]),
         "onnx_binary.onnx")
    unary = ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Erf"]
    save(model([helper.make_node(op, ["x"], [op.lower()], name=op.lower()) for op in unary]
               + [helper.make_node("LeakyRelu", ["x"], ["leaky"], name="leaky", alpha=0.2)],
               [vi("x", ["N", 4])], [vi(op.lower(), None) for op in unary] + [vi("leaky", None)]),
         "onnx_unary.onnx")
    save(model([helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
                helper.make_node("Flatten", ["x"], ["f"], name="flatten", axis=2),
                helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 3, 1]),
                helper.make_node("Concat", ["x", "x"], ["c"], name="concat", axis=1),
                helper.make_node("Squeeze", ["r", "ax"], ["sq"], name="squeeze"),
                helper.make_node("Unsqueeze", ["sq", "ax"], ["usq"], name="unsqueeze"),
                helper.make_node("Shape", ["x"], ["shape"], name="shape"),
                helper.make_node("Slice", ["x", "st", "en", "sa", "sp"], ["sl"], name="slice")],
               [X4], [vi(n, None) for n in ["r", "f", "t", "c", "sq", "usq", "shape", "sl"]],
               [init("s", np.array([0, 1, 3, -1], np.int64)), init("ax", np.array([1], np.int64)),
                init("st", np.array([1, -4], np.int64)), init("en", np.array([100, -1], np.int64)),
                init("sa", np.array([2, 3], np.int64)), init("sp", np.array([2, 1], np.int64))]),
         "onnx_shape_ops.onnx")
    # Softmax before opset 13 flattens to 2-D at axis; opset 13 is per axis.
    save(model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1)],
               [vi("x", [2, 3, 4])], [vi("y", None)], opset=11), "onnx_softmax_v11.onnx")
    save(model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1),
                helper.make_node("LogSoftmax", ["x"], ["z"], name="logsoftmax")],
               [vi("x", ["N", 3, 4])], [vi("y", None), vi("z", None)]), "onnx_softmax_v13.onnx")
    save(model([helper.make_node("Constant", [], ["k"], name="const",
                                 value=helper.make_tensor("k", TensorProto.FLOAT, [4], [1, 2, 3, 4])),
                helper.make_node("Add", ["x", "k"], ["a"], name="add"),
                helper.make_node("Dropout", ["a"], ["d"], name="dropout"),
                helper.make_node("Identity", ["d"], ["i"], name="identity"),
                helper.make_node("Pad", ["i", "pads", "pv"], ["p"], name="pad", mode="constant"),
                helper.make_node("ReduceMean", ["p"], ["m"], name="mean", axes=[1], keepdims=0),
                helper.make_node("Cast", ["m"], ["c"], name="cast", to=TensorProto.FLOAT16)],
               [vi("x", ["N", 4])], [vi("c", None)],
               [init("pads", np.array([0, 1, 0, 2], np.int64)), init("pv", np.array(0.5, np.float32))]),
         "onnx_misc.onnx")

    # Errors.
    # An op of the default domain gopt does not import (sequences are out of
    # scope): an empty sequence whose length is the output.
    save(model([helper.make_node("SequenceEmpty", [], ["s"], name="empty"),
                helper.make_node("SequenceLength", ["s"], ["y"], name="len")],
               [], [vi("y", [], TensorProto.INT64)]),
         "onnx_err_unsupported.onnx")
    save(model([helper.make_node("Add", ["a", "b"], ["y"], name="bad_add")],
               [vi("a", [2, 3]), vi("b", [4])], [vi("y", [2, 3])]), "onnx_err_shape.onnx",
         check=False)
    bad = init("w", rand(2, 3))
    bad.raw_data = bad.raw_data[:-4]
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [vi("x", [2, 3])], [vi("y", None)], [bad]), "onnx_err_initializer.onnx",
         check=False)
    save(model([helper.make_node("Reshape", ["x", "s"], ["y"], name="dyn_reshape")],
               [vi("x", [2, 3]), vi("s", [2], TensorProto.INT64)], [vi("y", ["a", "b"])]),
         "onnx_err_nonconst.onnx")
    save(model([helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
               [vi("x", [2, 3]), vi("lo", [], TensorProto.FLOAT)], [vi("y", None)]),
         "onnx_err_clip.onnx")
    save(model([helper.make_node("MaxPool", ["x"], ["y", "idx"], name="pool", kernel_shape=[2, 2]),
                helper.make_node("Cast", ["idx"], ["z"], name="use_indices", to=TensorProto.FLOAT)],
               [X4], [vi("y", None), vi("z", None)]), "onnx_err_indices.onnx")
    save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
               [X4], [vi("y", None)], [init("w", rand(4, 5, 3, 3))]), "onnx_err_conv_channels.onnx",
         check=False)
    with open(os.path.join(OUT, "onnx_err_truncated.onnx"), "wb") as f:
        f.write(open(os.path.join(OUT, "onnx_conv.onnx"), "rb").read()[:-40])


def tf_schema():
    """lib/Import/graph.proto compiled with protoc, imported."""
    with tempfile.TemporaryDirectory() as tmp:
        # A file name of its own: torch registers another "graph.proto" in
        # protobuf's default pool.
        shutil.copy(os.path.join(ROOT, "lib", "Import", "graph.proto"),
                    os.path.join(tmp, "gopt_tf_graph.proto"))
        subprocess.check_call(["protoc", "--python_out=" + tmp, "-I", tmp,
                               os.path.join(tmp, "gopt_tf_graph.proto")])
        sys.path.insert(0, tmp)
        import gopt_tf_graph_pb2 as tf
    return tf


def tf_helpers(tf):
    """node/const/placeholder builders over the GraphDef schema `tf`."""
    F = tf.DT_FLOAT

    def node(g, name, op, inputs=(), **attrs):
        n = g.node.add(name=name, op=op, input=list(inputs))
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int) and k in ("T", "dtype", "DstT", "SrcT", "out_type", "Tidx", "Tshape"):
                a.type = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, bytes):
                a.s = v
            elif isinstance(v, list):
                a.list.i.extend(v)
            elif isinstance(v, tf.TensorShapeProto):
                a.shape.CopyFrom(v)
        return n

    def const(g, name, array):
        n = node(g, name, "Const", dtype=F if array.dtype == np.float32 else tf.DT_INT32)
        t = n.attr["value"].tensor
        t.dtype = F if array.dtype == np.float32 else tf.DT_INT32
        for d in array.shape:
            t.tensor_shape.dim.add(size=d)
        t.tensor_content = array.tobytes()
        return n

    def placeholder(g, name, dims):
        shape = tf.TensorShapeProto()
        for d in dims:
            shape.dim.add(size=d)
        return node(g, name, "Placeholder", dtype=F, shape=shape)

    return node, const, placeholder


def graphdef():
    from google.protobuf import text_format
    tf = tf_schema()
    F = tf.DT_FLOAT
    node, const, placeholder = tf_helpers(tf)

    # A ResNet basic block, NHWC, batch norm unfused as tf.layers writes it.
    g = tf.GraphDef()
    placeholder(g, "input", [-1, 8, 8, 4])

    def conv_bn(prefix, x):
        const(g, prefix + "/kernel", rand(3, 3, 4, 4))
        node(g, prefix + "/Conv2D", "Conv2D", [x, prefix + "/kernel"], T=F, strides=[1, 1, 1, 1],
             padding=b"SAME", data_format=b"NHWC")
        c = prefix + "/Conv2D"
        bn = prefix + "/bn"
        const(g, bn + "/axes", np.array([0, 1, 2], np.int32))
        node(g, bn + "/moments/mean", "Mean", [c, bn + "/axes"], T=F, keep_dims=True)
        node(g, bn + "/moments/StopGradient", "StopGradient", [bn + "/moments/mean"], T=F)
        node(g, bn + "/moments/SquaredDifference", "SquaredDifference",
             [c, bn + "/moments/StopGradient"], T=F)
        node(g, bn + "/moments/variance", "Mean", [bn + "/moments/SquaredDifference", bn + "/axes"],
             T=F, keep_dims=True)
        const(g, bn + "/epsilon", np.array(1e-3, np.float32))
        const(g, bn + "/gamma", rand(4) + 1)
        const(g, bn + "/beta", rand(4))
        node(g, bn + "/add", "AddV2", [bn + "/moments/variance", bn + "/epsilon"], T=F)
        node(g, bn + "/Rsqrt", "Rsqrt", [bn + "/add"], T=F)
        node(g, bn + "/mul", "Mul", [bn + "/Rsqrt", bn + "/gamma"], T=F)
        node(g, bn + "/mul_1", "Mul", [c, bn + "/mul"], T=F)
        node(g, bn + "/mul_2", "Mul", [bn + "/moments/mean", bn + "/mul"], T=F)
        node(g, bn + "/sub", "Sub", [bn + "/beta", bn + "/mul_2"], T=F)
        node(g, bn + "/add_1", "AddV2", [bn + "/mul_1", bn + "/sub"], T=F)
        return bn + "/add_1"

    y = conv_bn("block/conv1", "input")
    node(g, "block/relu1", "Relu", [y], T=F)
    y = conv_bn("block/conv2", "block/relu1")
    node(g, "block/add", "AddV2", [y, "input"], T=F)
    node(g, "block/relu2", "Relu", ["block/add"], T=F)
    node(g, "block/pool", "MaxPool", ["block/relu2"], T=F, ksize=[1, 2, 2, 1],
         strides=[1, 2, 2, 1], padding=b"VALID")
    with open(os.path.join(OUT, "resnet_block_nhwc.pb"), "wb") as f:
        f.write(g.SerializeToString())
    with open(os.path.join(OUT, "resnet_block_nhwc.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(g))

    # A training-style graph.
    g = tf.GraphDef()
    placeholder(g, "images", [-1, 8, 8, 3])
    node(g, "images/read", "Identity", ["images"], T=F)
    const(g, "conv/kernel", rand(3, 3, 3, 2))
    node(g, "conv/depthwise", "DepthwiseConv2dNative", ["images/read", "conv/kernel"], T=F,
         strides=[1, 1, 1, 1], padding=b"SAME")
    node(g, "conv/check", "CheckNumerics", ["conv/depthwise"], T=F, message=b"conv output")
    for n, v in [("bn/gamma", rand(6) + 1), ("bn/beta", rand(6)), ("bn/mean", rand(6)),
                 ("bn/var", rand(6) + 1)]:
        const(g, n, v)
    node(g, "bn/FusedBatchNormV3", "FusedBatchNormV3",
         ["conv/check", "bn/gamma", "bn/beta", "bn/mean", "bn/var"], T=F, U=F, epsilon=1e-3,
         is_training=True, exponential_avg_factor=0.1, data_format=b"NHWC")
    node(g, "relu", "Relu6", ["bn/FusedBatchNormV3"], T=F)
    const(g, "pool/axes", np.array([1, 2], np.int32))
    node(g, "pool", "Mean", ["relu", "pool/axes"], T=F, keep_dims=False)
    node(g, "pool/stop", "StopGradient", ["bn/FusedBatchNormV3:1"], T=F)
    const(g, "fc/w", rand(6, 5))
    const(g, "fc/b", rand(5))
    node(g, "fc/MatMul", "MatMul", ["pool", "fc/w"], T=F)
    node(g, "fc/BiasAdd", "BiasAdd", ["fc/MatMul", "fc/b"], T=F)
    node(g, "probs", "Softmax", ["fc/BiasAdd"], T=F)
    node(g, "update", "NoOp", ["^probs"])
    with open(os.path.join(OUT, "training_nhwc.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(g))


def conv_transpose_nhwc(x, w, stride, pads, out_hw):
    """TensorFlow's Conv2DBackpropInput: x [N, H, W, Cin], w [KH, KW, Cout,
    Cin]; every input pixel scatters w-weighted into the output."""
    n, h, wd, _ = x.shape
    kh, kw, cout, _ = w.shape
    full = np.zeros((n, (h - 1) * stride + kh, (wd - 1) * stride + kw, cout), np.float64)
    for i in range(h):
        for j in range(wd):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :] += np.einsum(
                "nc,hwoc->nhwo", x[:, i, j, :].astype(np.float64), w)
    out = np.zeros((n, out_hw[0], out_hw[1], cout), np.float64)
    crop = full[:, pads[0]:, pads[1]:, :][:, :out_hw[0], :out_hw[1], :]
    out[:, :crop.shape[1], :crop.shape[2], :] = crop
    return out


def resize_bilinear_half_pixel(x, out_hw):
    """TensorFlow's ResizeBilinear with half_pixel_centers."""
    def taps(out, inp):
        src = (np.arange(out) + 0.5) * (inp / out) - 0.5
        lo = np.floor(src)
        frac = src - lo
        return (np.clip(lo, 0, inp - 1).astype(int),
                np.clip(lo + 1, 0, inp - 1).astype(int), frac)
    h0, h1, fh = taps(out_hw[0], x.shape[1])
    w0, w1, fw = taps(out_hw[1], x.shape[2])
    top = x[:, h0][:, :, w0] * (1 - fw)[None, None, :, None] + x[:, h0][:, :, w1] * fw[None, None, :, None]
    bot = x[:, h1][:, :, w0] * (1 - fw)[None, None, :, None] + x[:, h1][:, :, w1] * fw[None, None, :, None]
    return top * (1 - fh)[None, :, None, None] + bot * fh[None, :, None, None]


def resize_nearest_align_corners(x, out_hw):
    """TensorFlow's ResizeNearestNeighbor with align_corners: round half
    away from zero of out * (in - 1) / (out - 1)."""
    def index(out, inp):
        scale = (inp - 1) / (out - 1) if out > 1 else 0
        return np.minimum(np.floor(np.arange(out) * scale + 0.5), inp - 1).astype(int)
    return x[:, index(out_hw[0], x.shape[1])][:, :, index(out_hw[1], x.shape[2])]


def graphdef_image():
    from google.protobuf import text_format
    tf = tf_schema()
    F = tf.DT_FLOAT
    node, const, placeholder = tf_helpers(tf)
    g = tf.GraphDef()
    placeholder(g, "input", [-1, 5, 6, 3])
    w = rand(3, 3, 4, 3)
    b = rand(4)
    const(g, "up/kernel", w)
    const(g, "up/bias", b)
    # SAME, stride 2: the output is 2x the input; the forward conv pads
    # (3 - 2) = 1 row, at the end.
    const(g, "up/input_sizes", np.array([1, 10, 12, 4], np.int32))
    node(g, "up/conv2d_transpose", "Conv2DBackpropInput",
         ["up/input_sizes", "up/kernel", "input"], T=F, strides=[1, 2, 2, 1],
         padding=b"SAME", data_format=b"NHWC")
    node(g, "up/BiasAdd", "BiasAdd", ["up/conv2d_transpose", "up/bias"], T=F)
    const(g, "resize/size", np.array([15, 9], np.int32))
    node(g, "resize", "ResizeBilinear", ["up/BiasAdd", "resize/size"], T=F,
         half_pixel_centers=True)
    const(g, "nearest/size", np.array([7, 8], np.int32))
    node(g, "nearest", "ResizeNearestNeighbor", ["resize", "nearest/size"], T=F,
         align_corners=True)
    with open(os.path.join(OUT, "image_nhwc.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(g))
    x = RNG.standard_normal((1, 5, 6, 3)).astype(np.float32)
    y = conv_transpose_nhwc(x, w.astype(np.float64), 2, (0, 0), (10, 12)) + b
    y = resize_nearest_align_corners(resize_bilinear_half_pixel(y, (15, 9)), (7, 8))
    np.save(os.path.join(OUT, "image_nhwc_input.npy"), x)
    np.save(os.path.join(OUT, "image_nhwc_expected.npy"), y.astype(np.float32))


def conv2d_nhwc(x, w, stride=1, padding="SAME", groups=1):
    """TensorFlow's Conv2D, NHWC, HWIO filter (grouped when groups > 1),
    SAME pads split with the extra row at the end; float64."""
    n, h, wd, c = x.shape
    kh, kw, cin, cout = w.shape
    def pads(size, k):
        if padding == "VALID":
            return 0, 0, (size - k) // stride + 1
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        return total // 2, total - total // 2, out
    pt, pb, oh = pads(h, kh)
    pl, pr, ow = pads(wd, kw)
    xp = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    y = np.zeros((n, oh, ow, cout))
    per = cout // groups
    for g in range(groups):
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw,
                           g * cin:(g + 1) * cin]
                y[:, i, j, g * per:(g + 1) * per] = np.einsum(
                    "nhwc,hwco->no", patch, w[..., g * per:(g + 1) * per])
    return y


def depthwise_nhwc(x, w, stride=1, padding="SAME"):
    """DepthwiseConv2dNative: w [KH, KW, C, M]; output channel c * M + m."""
    kh, kw, c, m = w.shape
    return conv2d_nhwc(x, w.reshape(kh, kw, 1, c * m), stride, padding, groups=c)


def graphdef_fused():
    """Seeds its own generator: the same files alone or with the rest."""
    global RNG
    RNG = np.random.default_rng(5678)
    from google.protobuf import text_format
    tf = tf_schema()
    F = tf.DT_FLOAT
    node, const, placeholder = tf_helpers(tf)

    def fused(g, name, op, inputs, fused_ops, **attrs):
        n = node(g, name, op, inputs, T=F, num_args=len(inputs) - 2, **attrs)
        n.attr["fused_ops"].list.s.extend(fused_ops)
        return n

    g = tf.GraphDef()
    placeholder(g, "input", [1, 6, 6, 3])
    x = RNG.standard_normal((1, 6, 6, 3)).astype(np.float32)
    conv = dict(strides=[1, 1, 1, 1], padding=b"SAME", data_format=b"NHWC")
    w1, b1 = rand(3, 3, 3, 4) * 5, rand(4)
    const(g, "c1/w", w1)
    const(g, "c1/b", b1)
    fused(g, "c1", "_FusedConv2D", ["input", "c1/w", "c1/b"], [b"BiasAdd", b"Relu"], **conv)
    y1 = np.maximum(conv2d_nhwc(x, w1) + b1, 0)
    w2 = rand(3, 3, 4, 4) * 5
    bn = [rand(4) + 1, rand(4), rand(4), rand(4) + 1]
    const(g, "c2/w", w2)
    for k, v in zip(["scale", "offset", "mean", "var"], bn):
        const(g, "c2/" + k, v)
    fused(g, "c2", "_FusedConv2D", ["c1", "c2/w"] + ["c2/" + k for k in ["scale", "offset", "mean", "var"]],
          [b"FusedBatchNorm", b"Relu"], epsilon=1e-3, **dict(conv, strides=[1, 2, 2, 1]))
    y2 = conv2d_nhwc(y1, w2, stride=2)
    y2 = np.maximum((y2 - bn[2]) / np.sqrt(bn[3] + 1e-3) * bn[0] + bn[1], 0)
    w3, b3 = rand(3, 3, 4, 2) * 5, rand(8)
    const(g, "dw/w", w3)
    const(g, "dw/b", b3)
    fused(g, "dw", "_FusedDepthwiseConv2dNative", ["c2", "dw/w", "dw/b"], [b"BiasAdd", b"Relu6"],
          **conv)
    y3 = np.clip(depthwise_nhwc(y2, w3) + b3, 0, 6)
    w4, b4 = rand(1, 1, 8, 4) * 5, rand(4)
    const(g, "leaky/w", w4)
    const(g, "leaky/b", b4)
    fused(g, "leaky", "_FusedConv2D", ["dw", "leaky/w", "leaky/b"], [b"BiasAdd", b"LeakyRelu"],
          leakyrelu_alpha=0.3, **dict(conv, padding=b"VALID"))
    y4 = conv2d_nhwc(y3, w4, padding="VALID") + b4
    y4 = np.where(y4 >= 0, y4, 0.3 * y4)
    w5, b5 = rand(3, 3, 4, 4) * 5, rand(4)
    const(g, "elu/w", w5)
    const(g, "elu/b", b5)
    fused(g, "elu", "_FusedConv2D", ["leaky", "elu/w", "elu/b"], [b"BiasAdd", b"Elu"], **conv)
    y5 = conv2d_nhwc(y4, w5) + b5
    y5 = np.where(y5 > 0, y5, np.expm1(y5))
    const(g, "flat/shape", np.array([1, 36], np.int32))
    node(g, "flat", "Reshape", ["elu", "flat/shape"], T=F)
    w6, b6 = rand(36, 5) * 5, rand(5)
    const(g, "fc/w", w6)
    const(g, "fc/b", b6)
    fused(g, "fc", "_FusedMatMul", ["flat", "fc/w", "fc/b"], [b"BiasAdd", b"Relu"],
          transpose_a=False, transpose_b=False)
    y6 = np.maximum(y5.reshape(1, 36) @ w6 + b6, 0)
    with open(os.path.join(OUT, "fused_nhwc.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(g))
    np.save(os.path.join(OUT, "fused_nhwc_input.npy"), x)
    np.save(os.path.join(OUT, "fused_nhwc_expected.npy"), y6.astype(np.float32))


def graphdef_tf_ops():
    """Seeds its own generator: the same files alone or with the rest."""
    global RNG
    RNG = np.random.default_rng(91011)
    from google.protobuf import text_format
    tf = tf_schema()
    F, I32 = tf.DT_FLOAT, tf.DT_INT32
    node, const, placeholder = tf_helpers(tf)
    g = tf.GraphDef()
    placeholder(g, "input", [1, 8, 8, 3])
    x = RNG.standard_normal((1, 8, 8, 3)).astype(np.float32)
    i32 = lambda *v: np.array(v if len(v) != 1 else v[0], np.int32)

    def strided(name, inp, begin, end, strides, **masks):
        const(g, name + "/begin", i32(*begin))
        const(g, name + "/end", i32(*end))
        const(g, name + "/strides", i32(*strides))
        node(g, name, "StridedSlice", [inp, name + "/begin", name + "/end", name + "/strides"],
             T=F, Index=I32, **masks)

    w1, b1 = rand(3, 3, 3, 4) * 5, rand(4) + 0.2
    const(g, "conv/w", w1)
    const(g, "conv/b", b1)
    n = node(g, "conv", "_FusedConv2D", ["input", "conv/w", "conv/b"], T=F, num_args=1,
             strides=[1, 1, 1, 1], padding=b"SAME", data_format=b"NHWC")
    n.attr["fused_ops"].list.s.extend([b"BiasAdd", b"Relu"])
    c = np.maximum(conv2d_nhwc(x, w1) + b1, 0)
    # The resize size from the conv's shape: Shape -> StridedSlice -> Mul.
    node(g, "size/shape", "Shape", ["conv"], T=F)
    const(g, "size/begin", i32(1))
    const(g, "size/end", i32(3))
    const(g, "size/strides", i32(1))
    node(g, "size/hw", "StridedSlice", ["size/shape", "size/begin", "size/end", "size/strides"],
         T=I32, Index=I32)
    const(g, "size/two", i32(2))
    node(g, "size", "Mul", ["size/hw", "size/two"], T=I32)
    node(g, "resize", "ResizeBilinear", ["conv", "size"], T=F, half_pixel_centers=True)
    r = resize_bilinear_half_pixel(c, (16, 16))
    # r[:, 14::-3, 1:-1:2, :], r[..., 1:3], then [0, :, newaxis].
    strided("s1", "resize", [0, 14, 1, 0], [0, 0, -1, 0], [1, -3, 2, 1],
            begin_mask=0b1001, end_mask=0b1011)
    s1 = r[:, 14::-3, 1:-1:2, :]
    strided("s2", "s1", [0, 1], [0, 3], [1, 1], ellipsis_mask=1)
    s2 = s1[..., 1:3]
    strided("s3", "s2", [0, 0, 0], [1, 0, 0], [1, 1, 1], begin_mask=0b010, end_mask=0b010,
            shrink_axis_mask=0b001, new_axis_mask=0b100)
    s3 = s2[0, :, np.newaxis]
    const(g, "split/axis", i32(3))
    node(g, "split", "Split", ["split/axis", "s3"], T=F, num_split=2)
    p0, p1 = s3[..., :1], s3[..., 1:]
    node(g, "addn", "AddN", ["split", "split:1", "split"], T=F, N=3)
    a = p0 + p1 + p0
    node(g, "pack", "Pack", ["split", "addn"], T=F, N=2, axis=0)
    node(g, "unpack", "Unpack", ["pack"], T=F, num=2, axis=0)
    node(g, "diff", "Sub", ["unpack:1", "unpack"], T=F)
    d = a - p0
    # Reshape to [Shape(d)[0], -1]: Shape -> StridedSlice (shrink) -> Pack.
    node(g, "flat/shape", "Shape", ["diff"], T=F)
    strided("flat/rows", "flat/shape", [0], [1], [1], shrink_axis_mask=1)
    g.node[-1].attr["T"].type = I32
    const(g, "flat/minus_one", i32(-1))
    node(g, "flat/dims", "Pack", ["flat/rows", "flat/minus_one"], T=I32, N=2, axis=0)
    node(g, "flat", "Reshape", ["diff", "flat/dims"], T=F)
    f = d.reshape(d.shape[0], -1)
    w2, b2 = rand(7, 3) * 5, rand(3)
    const(g, "fc/w", w2)
    const(g, "fc/b", b2)
    n = node(g, "fc", "_FusedMatMul", ["flat", "fc/w", "fc/b"], T=F, num_args=1,
             transpose_a=False, transpose_b=False)
    n.attr["fused_ops"].list.s.extend([b"BiasAdd"])
    m = f @ w2 + b2
    const(g, "range/start", i32(0))
    const(g, "range/limit", i32(3))
    const(g, "range/delta", i32(1))
    node(g, "range", "Range", ["range/start", "range/limit", "range/delta"], Tidx=I32)
    node(g, "range/float", "Cast", ["range"], SrcT=I32, DstT=F)
    node(g, "plus_range", "AddV2", ["fc", "range/float"], T=F)
    const(g, "fill/dims", i32(5, 3))
    const(g, "fill/value", np.array(0.5, np.float32))
    node(g, "fill", "Fill", ["fill/dims", "fill/value"], T=F, index_type=I32)
    node(g, "half", "Mul", ["plus_range", "fill"], T=F)
    const(g, "sparse/indices", i32([0, 1], [4, 2]))
    const(g, "sparse/shape", i32(5, 3))
    const(g, "sparse/values", np.array([2.0, -1.0], np.float32))
    const(g, "sparse/default", np.array(1.0, np.float32))
    node(g, "sparse", "SparseToDense",
         ["sparse/indices", "sparse/shape", "sparse/values", "sparse/default"], T=F,
         Tindices=I32, validate_indices=True)
    node(g, "scaled", "Mul", ["half", "sparse"], T=F)
    node(g, "zeros", "ZerosLike", ["scaled"], T=F)
    node(g, "ones", "OnesLike", ["scaled"], T=F)
    node(g, "plus_zeros", "AddV2", ["scaled", "zeros"], T=F)
    node(g, "out", "Mul", ["plus_zeros", "ones"], T=F)
    mask = np.ones((5, 3))
    mask[0, 1], mask[4, 2] = 2.0, -1.0
    out = (m + np.arange(3)) * 0.5 * mask
    # SplitV of the conv's channels into [1, -1 (= 1), 2], two summed.
    const(g, "splitv/sizes", i32(1, -1, 2))
    const(g, "splitv/axis", i32(-1))
    node(g, "splitv", "SplitV", ["conv", "splitv/sizes", "splitv/axis"], T=F, num_split=3,
         Tlen=I32)
    node(g, "channels", "AddN", ["splitv", "splitv:1", "splitv:2"], T=F, N=3)
    g.node[-1].input[2] = "splitv:1"
    channels = c[..., :1] + 2 * c[..., 1:2]
    with open(os.path.join(OUT, "tf_ops_nhwc.pbtxt"), "w") as fh:
        fh.write(text_format.MessageToString(g))
    np.save(os.path.join(OUT, "tf_ops_nhwc_input.npy"), x)
    np.save(os.path.join(OUT, "tf_ops_nhwc_out.npy"), out.astype(np.float32))
    np.save(os.path.join(OUT, "tf_ops_nhwc_channels.npy"), channels.astype(np.float32))


def onnx_qdq():
    """Symmetric int8 Q/DQ around a 1x1 conv, with numpy's answer."""
    x_scale = np.array(0.02, np.float32)
    zero = np.array(0, np.int8)
    w_q = np.array([[[[100]], [[-50]]], [[[127]], [[-128]]]], np.int8)
    w_scale = np.array([0.01, 0.002], np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "zp"], ["xq"], name="quant_x"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "zp"], ["xd"], name="dequant_x"),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["wd"], name="dequant_w",
                         axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["y"], name="conv"),
    ]
    inits = [init("xs", x_scale), init("zp", zero), init("wq", w_q), init("ws", w_scale),
             init("wzp", np.zeros(2, np.int8))]
    save(model(nodes, [vi("x", ["N", 2, 3, 3])], [vi("y", None)], inits), "onnx_qdq.onnx")
    # Inputs that hit ties (0.01 / 0.02 = 0.5 -> 0, 0.03 -> 1.5 -> 2) and
    # saturation (+-3 -> +-150 -> 127 / -128).
    x = np.array([0.01, 0.03, -0.01, -0.03, 3.0, -3.0, 0.5, -0.5, 0.0] * 2,
                 np.float32).reshape(1, 2, 3, 3)
    xq = np.clip(np.rint(x / x_scale), -128, 127).astype(np.int8)
    xd = xq.astype(np.float32) * x_scale
    wd = w_q.astype(np.float32) * w_scale.reshape(2, 1, 1, 1)
    y = np.einsum("nchw,oc->nohw", xd, wd[:, :, 0, 0]).astype(np.float32)
    np.save(os.path.join(OUT, "onnx_qdq.input.npy"), x)
    np.save(os.path.join(OUT, "onnx_qdq.output.npy"), y)
    # Forms gopt rejects: uint8 (no zero point), a non-zero zero point.
    save(model([helper.make_node("QuantizeLinear", ["x", "xs"], ["q"], name="quant_u8")],
               [vi("x", [2])], [vi("q", None)], [init("xs", x_scale)]),
         "onnx_err_qdq_uint8.onnx")
    save(model([helper.make_node("QuantizeLinear", ["x", "xs", "zp"], ["q"], name="quant_zp")],
               [vi("x", [2])], [vi("q", None)],
               [init("xs", x_scale), init("zp", np.array(3, np.int8))]),
         "onnx_err_qdq_zero_point.onnx")


if __name__ == "__main__":
    ONLY = {"qdq": onnx_qdq, "image": graphdef_image, "fused": graphdef_fused,
            "tfops": graphdef_tf_ops}
    for name, write in ONLY.items():
        if name in sys.argv[1:]:
            os.makedirs(OUT, exist_ok=True)
            write()
            sys.exit(0)
    os.makedirs(OUT, exist_ok=True)
    lenet()
    onnx_ops()
    onnx_qdq()
    graphdef()
    graphdef_image()
    graphdef_fused()
    graphdef_tf_ops()
