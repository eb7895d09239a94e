#!/usr/bin/python3
"""Writes the .npy inputs of the gopt-run --calibrate tests (calibrate*.test).

Run from test/Runtime/Inputs: /usr/bin/python3 make-calibrate-inputs.py
"""
import numpy as np

# calibrate-chain.mlir's input, two batches of two rows: batch 1 spans
# [-3, 4], batch 2 adds -4 and 4.5.
chain = np.array([[-3.0, -1.0, 0.5, 2.0],
                  [1.0, -2.0, 4.0, 0.0],
                  [0.25, 0.75, -0.5, 1.5],
                  [3.0, -4.0, 2.0, 4.5]], dtype=np.float32)
np.save("calibrate-chain-x.npy", chain)

# The same with a NaN in batch 2, and with a value whose double (the
# matmul by 2*I) overflows f32 in batch 2.
nan = chain.copy()
nan[2, 1] = np.nan
np.save("calibrate-nan.npy", nan)
huge = chain.copy()
huge[3, 0] = 3e38
np.save("calibrate-huge.npy", huge)

# 256 values in [-1, 1) and one outlier of 100: the 99th percentile and the
# entropy threshold clip it, min/max does not.
rng = np.random.default_rng(0)
outlier = rng.uniform(-1, 1, size=(64, 4)).astype(np.float32)
outlier[10, 2] = 100.0
np.save("calibrate-outlier.npy", outlier)

# Four 2x6x6 images for calibrate-conv.mlir.
np.save("calibrate-images.npy",
        rng.standard_normal((4, 2, 6, 6)).astype(np.float32))
