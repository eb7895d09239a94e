"""Inputs and expected outputs for Inputs/export-more.mlir: exact and tanh
GELU, an i32 and an f32 range."""
import math
import os
import sys

import numpy as np

out = sys.argv[1]
x = np.linspace(-3, 3, 10, dtype=np.float32).reshape(2, 5)
erf = np.vectorize(math.erf)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "gelu.npy"), (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(np.float32))
tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
np.save(os.path.join(out, "gelu_tanh.npy"), tanh.astype(np.float32))
np.save(os.path.join(out, "range_i32.npy"), np.arange(7, -1, -2, dtype=np.int32))
np.save(os.path.join(out, "range_f32.npy"), np.arange(0.5, 2.0, 0.5, dtype=np.float32))
