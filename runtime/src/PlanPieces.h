//===- PlanPieces.h - A plan cut at data-shaped ops -------------*- C++ -*-===//
//
// A plan with ops whose result shapes depend on operand data (non_zero,
// unique; OpSchema::dataDependentResultShapes) runs in pieces: the ops
// between two such ops form a plan of their own, which a session of its own
// resolves, plans memory for and runs; each data-dependent op runs on the
// host between them and says how large its results are. The tensors a piece
// takes from earlier pieces are its inputs, the ones later pieces or the
// plan's outputs take are its outputs (docs/architecture.md, "Results
// shaped by data").
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_PLANPIECES_H
#define GOPT_RUNTIME_SRC_PLANPIECES_H

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Status.h"

#include <vector>

namespace gopt::runtime {

struct PlanPiece {
  // An op with data-dependent result shapes, run on the host; -1 for a
  // piece of ops run by a session of its own.
  int hostOp = -1;
  // The piece's ops as a plan (constants it reads copied; every subplan of
  // the plan, so that region indices stay valid).
  plan::Plan plan;
  // The plan's tensor bound to each input (output) binding of `plan`, in
  // order; for a host op, its operands (results).
  std::vector<int> inputs;
  std::vector<int> outputs;
};

// The first op of `p` (not of its subplans) with data-dependent result
// shapes, or -1.
int firstDataDependentOp(const plan::Plan &p);

// Cuts `p` at its ops with data-dependent result shapes. Fails for plans
// with state, which the pieces could not carry across runs.
StatusOr<std::vector<PlanPiece>> splitAtDataDependentOps(const plan::Plan &p);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_PLANPIECES_H
