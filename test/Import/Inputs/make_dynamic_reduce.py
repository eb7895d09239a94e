"""Inputs and expected outputs for Inputs/export-dynamic-reduce.mlir: the
mean (keep_dims) and the sum over axis -1 given at run time."""
import os
import sys

import numpy as np

out = sys.argv[1]
x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 - 3
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "axes.npy"), np.array([-1], np.int64))
np.save(os.path.join(out, "mean.npy"), x.mean(axis=-1, keepdims=True))
np.save(os.path.join(out, "sum.npy"), x.sum(axis=-1))
