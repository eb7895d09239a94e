#!/usr/bin/python3
"""Writes conv-bn-inputs.npy ([16,2,4,4] f32, N(0,1)) and conv-bn-labels.npy
([16] i64 in [0,3)) for conv-bn-classifier.mlir's training tests
(train-mixed-precision.test). Fixed seed: rerunning reproduces the files."""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)
np.save(os.path.join(here, "conv-bn-inputs.npy"),
        rng.standard_normal((16, 2, 4, 4)).astype(np.float32))
np.save(os.path.join(here, "conv-bn-labels.npy"),
        rng.integers(0, 3, 16).astype(np.int64))
