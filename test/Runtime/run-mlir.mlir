// RUN: env -u OMP_WAIT_POLICY gopt-run %s --batch 3 --warmup 2 --iterations 5 --profile | FileCheck %s
// RUN: env OMP_WAIT_POLICY=active gopt-run %s --warmup 0 --iterations 1 | FileCheck %s --check-prefix=ACTIVE
// RUN: gopt-run %s --batch 3 --pipeline 'builtin.module(canonicalize)' --compare %s | FileCheck %s --check-prefix=SAME
// RUN: not gopt-run %s --compare %S/Inputs/scaled.mlir 2>&1 | FileCheck %s --check-prefix=DIFF
// RUN: not gopt-run %S/Inputs/invalid.mlir 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: gopt-run %s --optimize --warmup 0 --iterations 1 --profile | FileCheck %s --check-prefix=OPT
// RUN: /usr/bin/python3 -c "import numpy, sys; numpy.save(sys.argv[1], numpy.ones((5, 8), numpy.float32))" %t.features.npy
// RUN: gopt-run %s --input features=%t.features.npy --warmup 0 --iterations 1 --json %t.json | FileCheck %s --check-prefix=INPUT
// RUN: /usr/bin/python3 -c "import json, sys; print('json batch', json.load(open(sys.argv[1]))['batch'])" %t.json | FileCheck %s --check-prefix=INPUT-JSON

/// gopt-run compiles .mlir graphs on the fly, times them and profiles each
/// op; --compare runs two graphs on the same inputs.

/// Unless the user sets OMP_WAIT_POLICY, gopt-run lets idle threads spin
/// briefly, then sleep, when its threads have CPUs to themselves and waits
/// passively on a busy machine, and says which, on which OpenMP runtime,
/// and why (openmp-runtime.test checks that libomp agrees).
// CHECK: model: {{.*}}run-mlir.mlir  backend: cpu  batch: 3  threads: 0  omp-wait: {{(default \(lib(g?)omp[.0-9so]*: (spin 5 ms|a short spin), then sleep\) \(|passive \(lib(g?)omp[.0-9so]*: sleep at once\) \(chosen: )[0-9.]+ other runnable tasks on [0-9]+ CPUs\)$}}
// CHECK: latency (ms): median {{[0-9.]+}}  p90 {{[0-9.]+}}  min {{[0-9.]+}}  (5 iterations after 2 warm-up)
// CHECK: throughput: {{[0-9.]+}} samples/s
// CHECK: op kind device
/// (the cpu schedule runs the relu as the matmul's post-op)
// CHECK: dense1+act matmul+relu cpu onednn

// ACTIVE: omp-wait: active

// SAME: logits 0 0 ok
// SAME: outputs match

// DIFF: logits {{[0-9.e+-]+}} 0.5 MISMATCH
// DIFF: outputs differ

/// --optimize runs gopt-optimize first: the identity is stripped.
// OPT: dense1+act matmul+relu cpu
// OPT-NOT: identity

/// An --input of 5 rows runs (and reports) a batch of 5, not --batch's 1.
// INPUT: batch: 5
// INPUT-JSON: json batch 5

// INVALID: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'gopt.matmul' op expects matching contraction dimensions, got 8 (a [?, 8]) and 4 (b [4, 2])

func.func @main(%x: tensor<?x8xf32> {gopt.name = "features"}) -> (tensor<?x2xf32> {gopt.name = "logits"}) {
  %w = gopt.constant dense<[[0.5, -0.5], [0.25, 0.75], [-1.0, 1.0], [0.1, 0.2], [0.3, -0.3], [0.0, 1.0], [1.0, 0.0], [-0.5, 0.5]]> : tensor<8x2xf32>
  %0 = gopt.matmul %x, %w : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32> loc("dense1")
  %1 = gopt.relu %0 : (tensor<?x2xf32>) -> tensor<?x2xf32> loc("act")
  %2 = gopt.identity %1 : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %2 : tensor<?x2xf32>
}
