//===- Distributed.h - Ranks of a data-parallel training run ----*- C++ -*-===//
//
// How a gopt-run process learns its place in a data-parallel run: torchrun's
// environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or
// Open MPI's (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK, with MASTER_ADDR and
// MASTER_PORT defaulting to 127.0.0.1:29500), and `--nproc N`, which starts
// N local ranks with torchrun's environment itself.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_DISTRIBUTED_H
#define GOPT_TOOLING_DISTRIBUTED_H

#include "gopt/Tooling/Train.h"
#include "gopt/runtime/Tensor.h"

#include <string>
#include <vector>

namespace gopt::tooling {

struct DistributedEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  // "torchrun", "Open MPI" or "" (a single process).
  std::string launcher;
};

// The environment's rank and world; a single process when neither contract
// is set. Errors name the variable: a non-number, a rank out of range.
runtime::StatusOr<DistributedEnv> readDistributedEnv();

// Starts options.nproc ranks of gopt-run (options.launchArgs) on this
// machine with torchrun's environment and waits for them. When one fails,
// the others get the collective timeout to fail on their own, then are
// killed. True when all exit 0.
runtime::StatusOr<bool> launchLocalRanks(const TrainOptions &options);

// A hash of what every rank must agree on: the plan's ops and the
// parameters' names, shapes and initial values.
uint64_t hashTrainingStep(const std::vector<std::string> &opKinds,
                          const std::vector<std::string> &paramNames,
                          const std::vector<runtime::Tensor> &params);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_DISTRIBUTED_H
