"""Writes datadep.mlir (non_zero of a computed tensor feeding transpose and
gather_nd, compress by a computed condition, unique of a computed tensor),
its inputs x.npy and w.npy, and numpy's results, into the directory given.
With the argument `other`, writes inputs with other counts (and their
results) instead, under the same names."""
import os
import sys

import numpy as np

out = sys.argv[1]
other = len(sys.argv) > 2 and sys.argv[2] == "other"

MLIR = """func.func @main(%x: tensor<3x4xf32> {gopt.name = "x"},
                 %w: tensor<4xf32> {gopt.name = "w"})
    -> (tensor<?xf32> {gopt.name = "picked"},
        tensor<?x2xi64> {gopt.name = "coords"},
        tensor<3x?xf32> {gopt.name = "columns"},
        tensor<?xf32> {gopt.name = "flat"},
        tensor<?xf32> {gopt.name = "distinct"},
        tensor<12xi64> {gopt.name = "inverse"},
        tensor<?xi64> {gopt.name = "counts"}) {
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %r = gopt.relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %nz = gopt.non_zero %r : (tensor<3x4xf32>) -> tensor<2x?xi64>
  %t = gopt.transpose %nz {perm = array<i64: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %g = gopt.gather_nd %x, %t : (tensor<3x4xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  %e = gopt.exp %g : (tensor<?xf32>) -> tensor<?xf32>
  %c = gopt.greater %w, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %cols = gopt.compress %x, %c {axis = -1 : i64} : (tensor<3x4xf32>, tensor<4xi1>) -> tensor<3x?xf32>
  %flat = gopt.compress %r, %c : (tensor<3x4xf32>, tensor<4xi1>) -> tensor<?xf32>
  %y, %i, %v, %n = gopt.unique %r {sorted = false} : (tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)
  %s = gopt.neg %y : (tensor<?xf32>) -> tensor<?xf32>
  return %e, %t, %cols, %flat, %s, %v, %n : tensor<?xf32>, tensor<?x2xi64>, tensor<3x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<12xi64>, tensor<?xi64>
}
"""

with open(os.path.join(out, "datadep.mlir"), "w") as f:
    f.write(MLIR)
if other:
    x = np.array([[-1, -2, 0, -3], [0, 0, 0, 0], [-5, 7, -6, -7]],
                 dtype=np.float32)
    w = np.array([0, 0, 0, 0], dtype=np.float32)
else:
    x = np.array([[1, -2, 3, 0], [3, 0.5, -1, 4], [0, 2, 1, 3]],
                 dtype=np.float32)
    w = np.array([1, -1, 2, 0], dtype=np.float32)
r = np.maximum(x, 0)
coords = np.array(np.nonzero(r)).T.astype(np.int64)
c = w > 0
y, first, inverse, counts = np.unique(r.flatten(), return_index=True,
                                      return_inverse=True, return_counts=True)
# Unsorted: in order of first occurrence.
order = np.argsort(first)
position = np.empty_like(order)
position[order] = np.arange(len(order))
def save(name, value):
    np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(value))


save("x", x)
save("w", w)
save("picked", np.exp(x[r > 0]))
save("coords", coords.reshape(-1, 2))
save("columns", np.compress(c, x, axis=1))
save("flat", np.compress(c, r.flatten()))
save("distinct", -y[order])
save("inverse", position[inverse].astype(np.int64))
save("counts", counts[order].astype(np.int64))
