// REQUIRES: gopt-run-mlir, python-onnx
// RUN: rm -rf %t && mkdir -p %t
// RUN: /usr/bin/python3 -c "import numpy as np; r = np.random.default_rng(3); [(np.save('%t/x%d.npy' % i, x), np.save('%t/y%d.npy' % i, np.repeat(np.repeat(x.reshape(1, 2, x.shape[2] // 2, 2, x.shape[3] // 2, 2).max(axis=(3, 5)), 2, axis=2), 2, axis=3))) for i, x in enumerate([r.standard_normal(s).astype(np.float32) for s in [(1, 2, 4, 6), (1, 2, 10, 8)]])]"
// RUN: gopt-run %s --warmup 0 --iterations 1 --input input0=%t/x0.npy --compare-npy output0=%t/y0.npy --atol 0 --rtol 0 | FileCheck %s
// RUN: gopt-run %s --warmup 0 --iterations 1 --input input0=%t/x1.npy --compare-npy output0=%t/y1.npy --atol 0 --rtol 0 | FileCheck %s
// RUN: gopt-run %s --optimize --warmup 0 --iterations 1 --input input0=%t/x1.npy --compare-npy output0=%t/y1.npy --atol 0 --rtol 0 | FileCheck %s
// CHECK: compare output0 with {{.*}}: ok

/// A model with dynamic H and W runs at the sizes its inputs have, though
/// the session's first guess (1 for every dynamic dim) cannot run its 2x2
/// max pool: shapes resolve again once the input is set. The nearest
/// resize by 2 then repeats each pixel twice in each direction.
func.func @main(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %p = gopt.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = "VALID", data_format = "NCHW"} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %y = gopt.resize %p {scales = array<f32: 2.0, 2.0>, mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", data_format = "NCHW"} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}
