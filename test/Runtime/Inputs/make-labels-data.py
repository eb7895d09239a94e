#!/usr/bin/python3
"""Writes the arrays of compare-labels.test (gopt-run --compare --labels):
labels-features.npy, [8, 10] f32 scores whose row i peaks at class i % 10
and dips at (i + 5) % 10 (scores.mlir picks the peak, scores-negated.mlir
the dip); labels.npy, [8] i64: the peak for rows 0-5, the dip for rows 6-7
(so 6/8 and 2/8 correct); and the malformed label files of the error
checks. Rerunning reproduces the files."""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rows = np.arange(8)
features = np.zeros((8, 10), np.float32)
features[rows, rows % 10] = 1.0
features[rows, (rows + 5) % 10] = -1.0
labels = np.where(rows < 6, rows % 10, (rows + 5) % 10).astype(np.int64)
out_of_range = labels.copy()
out_of_range[3] = 12
np.save(os.path.join(here, "labels-features.npy"), features)
np.save(os.path.join(here, "labels.npy"), labels)
np.save(os.path.join(here, "labels-int32.npy"), labels.astype(np.int32))
np.save(os.path.join(here, "labels-seven.npy"), labels[:7])
np.save(os.path.join(here, "labels-out-of-range.npy"), out_of_range)
np.save(os.path.join(here, "labels-2d.npy"), labels.reshape(8, 1))
np.save(os.path.join(here, "labels-float.npy"), labels.astype(np.float32))
