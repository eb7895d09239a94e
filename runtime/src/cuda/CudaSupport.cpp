//===- CudaSupport.cpp - Which ops the CUDA backend runs ------------------===//
//
// Plain C++, part of gopt_plan in every build: the CUDA backend's coverage,
// read from its dispatch table (CudaOps.def).
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/cuda/CudaSupport.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <cstring>

namespace gopt::runtime {

namespace {

// Predicates of CudaOps.def.
bool anyAttrs(const plan::Op &, std::string *) { return true; }

bool inferenceOnly(const plan::Op &op, std::string *whyNot) {
  if (!OpAttrs(op).getBool("training"))
    return true;
  if (whyNot)
    *whyNot = "training-mode " + op.kind() + " is CPU-only";
  return false;
}

// lstm, gru and rnn run on cuDNN's RNN, which has no gate clipping, no
// coupled input/forget gate and only GRU's linear-before-reset candidate;
// padded sequences (sequence_lens) stay on the CPU so far. Peepholes, an
// operand, are checked at kernel creation (RnnOps.cpp).
bool recurrentSupported(const plan::Op &op, std::string *whyNot) {
  OpAttrs attrs(op);
  const bool lstm = op.kind() == "lstm";
  std::string why;
  if (attrs.getFloat("clip") != 0.0)
    why = op.kind() + " with clip is CPU-only (cuDNN does not clip gates)";
  else if (lstm && attrs.getBool("input_forget"))
    why = "lstm with input_forget is CPU-only (cuDNN has no coupled "
          "input/forget gate)";
  else if (op.kind() == "gru" && !attrs.getBool("linear_before_reset"))
    why = "gru with linear_before_reset = false is CPU-only (cuDNN's GRU "
          "computes the linear-before-reset form)";
  else if (op.inputs_size() > (lstm ? 7 : 5))
    why = op.kind() + " with sequence_lens is CPU-only";
  if (why.empty())
    return true;
  if (whyNot)
    *whyNot = why;
  return false;
}

const CudaOpEntry *findEntry(const std::string &kind) {
  const std::vector<CudaOpEntry> &table = cudaOpTable();
  auto it = std::lower_bound(
      table.begin(), table.end(), kind,
      [](const CudaOpEntry &e, const std::string &k) { return e.kind < k; });
  return it != table.end() && it->kind == kind ? &*it : nullptr;
}

} // namespace

const std::vector<CudaOpEntry> &cudaOpTable() {
  static const std::vector<CudaOpEntry> table = [] {
    std::vector<CudaOpEntry> rows = {
#define GOPT_CUDA_OP(kind, predicate, ...) {kind, predicate, #__VA_ARGS__},
#include "CudaOps.def"
#undef GOPT_CUDA_OP
    };
    std::sort(rows.begin(), rows.end(),
              [](const CudaOpEntry &a, const CudaOpEntry &b) {
                return std::strcmp(a.kind, b.kind) < 0;
              });
    return rows;
  }();
  return table;
}

const std::vector<std::string> &cudaOpKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> result;
    for (const CudaOpEntry &entry : cudaOpTable())
      result.push_back(entry.kind);
    return result;
  }();
  return kinds;
}

bool hasCudaKernel(const plan::Op &op, std::string *whyNot) {
  const CudaOpEntry *entry = findEntry(op.kind());
  if (!entry) {
    if (whyNot)
      *whyNot = "'" + op.kind() + "' has no CUDA kernel";
    return false;
  }
  return entry->accepts(op, whyNot);
}

} // namespace gopt::runtime
