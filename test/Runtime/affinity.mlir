// RUN: env -u OMP_PLACES OMP_DISPLAY_ENV=true gopt-run %s --threads 1 --affinity cores --warmup 0 --iterations 1 2>&1 | FileCheck %s
// RUN: env -u OMP_PLACES LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 gopt-run %s --threads 1 --affinity cores --warmup 0 --iterations 1 | FileCheck %s --check-prefix=RANK
// RUN: env -u OMP_PLACES LOCAL_RANK=4095 LOCAL_WORLD_SIZE=4096 gopt-run %s --threads 1 --affinity cores --warmup 0 --iterations 1 | FileCheck %s --check-prefix=SHORT
// RUN: env OMP_PLACES={0} gopt-run %s --threads 1 --affinity cores --warmup 0 --iterations 1 | FileCheck %s --check-prefix=USER
// RUN: env -u OMP_PLACES gopt-run %s --warmup 0 --iterations 1 | FileCheck %s --check-prefix=NONE
// RUN: not gopt-run %s --affinity sockets 2>&1 | FileCheck %s --check-prefix=BAD

/// --affinity cores pins each OpenMP thread to a core of its own: gopt-run
/// sets OMP_PLACES (one place per core, its hyperthreads together) and
/// OMP_PROC_BIND=close and re-executes itself, so libgomp (which shows its
/// settings under OMP_DISPLAY_ENV) runs with them. Local rank r of N takes
/// the r-th run of cores (here rank 1 of 2 at one thread: the second core,
/// or no pinning where the machine has one core); ranks that need more
/// cores than there are are not pinned, and say so. A user's OMP_PLACES
/// wins. Without the flag nothing is pinned or reported.
// CHECK: OMP_PROC_BIND = 'CLOSE'
// CHECK: OMP_PLACES = '{{[{][0-9,]+[}]}}'
// CHECK: omp-wait: {{.*}}  affinity: cores {{[{][0-9,]+[}]$}}
// RANK: affinity: {{(cores [{][0-9,]+[}] \(local rank 1 of 2\)|2 rank\(s\) x 1 thread\(s\) need more than the 1 allowed cores: threads not pinned)$}}
// SHORT: affinity: 4096 rank(s) x 1 thread(s) need more than the {{[0-9]+}} allowed cores: threads not pinned
// USER: affinity: OMP_PLACES={0} (set before gopt-run)
// NONE-NOT: affinity:
// BAD: gopt-run: error: --affinity expects none or cores, got 'sockets'
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = gopt.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
