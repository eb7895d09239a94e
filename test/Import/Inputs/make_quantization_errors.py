"""ONNX quantization nodes gopt refuses, for onnx-quantization.test."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
U8, I32 = TensorProto.UINT8, TensorProto.INT32
# 300 products of 8-bit values per output can exceed 2^24, where f32 stops
# being exact.
g = helper.make_graph(
    [helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="mmi")], "long_k",
    [helper.make_tensor_value_info("a", U8, [2, 300]), helper.make_tensor_value_info("b", U8, [300, 4])],
    [helper.make_tensor_value_info("y", I32, [2, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "matmul_integer_long.onnx"))
