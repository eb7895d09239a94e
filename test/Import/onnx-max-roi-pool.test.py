"""Writes MaxRoiPool models and the expected outputs of a numpy
transcription of Fast R-CNN's RoI pooling as ONNX Runtime computes it.

  onnx-max-roi-pool.test.py OUT
"""
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper


def roi_pool(x, rois, pooled, scale):
    n, c, h, w = x.shape
    ph, pw = pooled
    y = np.zeros((rois.shape[0], c, ph, pw), np.float32)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        # C's roundf: half away from zero.
        rnd = lambda v: int(math.copysign(math.floor(abs(v) + 0.5), v))
        x1, y1, x2, y2 = (rnd(float(np.float32(v) * np.float32(scale)))
                          for v in roi[1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bh, bw = np.float32(rh) / np.float32(ph), np.float32(rw) / np.float32(pw)
        for i in range(ph):
            h0 = min(max(int(math.floor(np.float32(i) * bh)) + y1, 0), h)
            h1 = min(max(int(math.ceil(np.float32(i + 1) * bh)) + y1, 0), h)
            for j in range(pw):
                w0 = min(max(int(math.floor(np.float32(j) * bw)) + x1, 0), w)
                w1 = min(max(int(math.ceil(np.float32(j + 1) * bw)) + x1, 0), w)
                if h1 <= h0 or w1 <= w0:
                    continue
                y[r, :, i, j] = x[b, :, h0:h1, w0:w1].max(axis=(1, 2))
    return y


def save(out, name, nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    # Whole image, a small box (bins under a pixel), one past the right and
    # bottom edges, one wholly outside (empty bins: 0), one with reversed
    # corners (a 1x1 region), fractional corners that round half away.
    rois = np.array([[0, 0, 0, 11, 9], [1, 2, 3, 4, 4], [1, 8, 6, 15, 13],
                     [0, 13, 11, 20, 18], [1, 7, 7, 3, 2],
                     [0, 1.5, 2.5, 9.5, 7.25]], np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "rois.npy"), rois)
    nodes = [helper.make_node("MaxRoiPool", ["x", "rois"], ["pool3"],
                              pooled_shape=[3, 3], name="pool3"),
             helper.make_node("MaxRoiPool", ["x", "rois"], ["pool_scaled"],
                              pooled_shape=[2, 4], spatial_scale=0.5,
                              name="pool_scaled")]
    save(out, "max_roi_pool", nodes, [vi("x", [2, 3, 10, 12]), vi("rois", [6, 5])],
         [vi("pool3", [6, 3, 3, 3]), vi("pool_scaled", [6, 3, 2, 4])])
    np.save(os.path.join(out, "want_pool3.npy"), roi_pool(x, rois, (3, 3), 1.0))
    np.save(os.path.join(out, "want_pool_scaled.npy"),
            roi_pool(x, rois, (2, 4), 0.5))
    # A region of image 2 in a batch of 2: refused when the step runs.
    bad = rois.copy()
    bad[3, 0] = 2
    np.save(os.path.join(out, "bad_rois.npy"), bad)
    # Bad nodes: rows of 4, no pooled_shape.
    save(out, "rois4", [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"],
                                         pooled_shape=[2, 2], name="rois4")],
         [vi("x", [1, 3, 8, 8]), vi("rois", [2, 4])], [vi("y", [2, 3, 2, 2])])
    save(out, "no_pooled", [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"],
                                             name="no_pooled")],
         [vi("x", [1, 3, 8, 8]), vi("rois", [2, 5])], [vi("y", [2, 3, 2, 2])])


if __name__ == "__main__":
    main()
