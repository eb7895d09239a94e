#!/usr/bin/python3
"""Writes the plans the tests run in a runtime-only build (no compiler to
lower a graph there): relu.gplan and conv.gplan, conftest.py's RELU_MLIR
and CONV_MLIR lowered as they are. Run with a build that has the compiler
after changing those graphs or the plan format:

  /usr/bin/python3 python/tests/data/make_plans.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from conftest import CONV_MLIR, RELU_MLIR, gopt  # noqa: E402

for name, text in (("relu", RELU_MLIR), ("conv", CONV_MLIR)):
    path = os.path.join(HERE, name + ".gplan")
    gopt.load(text.encode()).save(path)
    print(f"{path}: {os.path.getsize(path)} bytes")
