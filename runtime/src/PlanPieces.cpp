//===- PlanPieces.cpp - A plan cut at ops whose results data shape --------===//
#include "PlanPieces.h"
#include "gopt/runtime/OpSchema.h"

#include <map>
#include <set>

namespace gopt::runtime {

namespace {

bool isDataDependent(const plan::Op &op) {
  const OpSchema *schema = findOpSchema(op.kind());
  return schema && schema->dataDependentResultShapes;
}

// The ops [begin, end) of `p` as a plan whose inputs are `inputs` and whose
// outputs are `outputs` (tensors of `p`).
plan::Plan pieceOf(const plan::Plan &p, int begin, int end,
                   const std::vector<int> &inputs,
                   const std::vector<int> &outputs, int index) {
  plan::Plan piece;
  piece.set_format_version(p.format_version());
  piece.set_name(p.name() + " (piece " + std::to_string(index) + ")");
  piece.set_producer(p.producer());
  *piece.mutable_subplans() = p.subplans();
  std::map<int, int> local; // tensor of p -> tensor of piece
  std::set<int> exported(outputs.begin(), outputs.end());
  std::string constants;
  auto add = [&](int t, plan::TensorInfo::Kind kind) {
    auto [it, inserted] = local.emplace(t, piece.tensors_size());
    if (!inserted)
      return it->second;
    plan::TensorInfo &info = *piece.add_tensors();
    info = p.tensors(t);
    info.set_kind(kind);
    info.clear_constant_offset();
    info.clear_constant_size();
    if (kind == plan::TensorInfo::CONSTANT) {
      constants.resize((constants.size() + kConstantAlignment - 1) /
                       kConstantAlignment * kConstantAlignment);
      info.set_constant_offset(constants.size());
      info.set_constant_size(p.tensors(t).constant_size());
      constants.append(p.constants(), p.tensors(t).constant_offset(),
                       p.tensors(t).constant_size());
    }
    return it->second;
  };
  // Bindings are named after their tensors; a name two tensors share (a
  // hand-built plan) gets the tensor's index, as binding names are unique.
  std::set<std::string> names;
  auto bindingName = [&](int t) {
    std::string name = p.tensors(t).name();
    if (!names.insert(name).second) {
      name += "#" + std::to_string(t);
      names.insert(name);
    }
    return name;
  };
  for (int t : inputs) {
    plan::Binding &b = *piece.add_inputs();
    b.set_name(bindingName(t));
    b.set_tensor(add(t, plan::TensorInfo::INPUT));
  }
  for (int o = begin; o < end; ++o) {
    plan::Op &op = *piece.add_ops();
    op = p.ops(o);
    op.clear_inputs();
    op.clear_outputs();
    for (int t : p.ops(o).inputs())
      op.add_inputs(add(t, p.tensors(t).kind() == plan::TensorInfo::CONSTANT
                               ? plan::TensorInfo::CONSTANT
                               : plan::TensorInfo::INPUT));
    for (int t : p.ops(o).outputs())
      op.add_outputs(add(t, exported.count(t)
                                ? plan::TensorInfo::OUTPUT
                                : plan::TensorInfo::INTERMEDIATE));
  }
  for (int t : outputs) {
    plan::Binding &b = *piece.add_outputs();
    b.set_name(bindingName(t));
    b.set_tensor(local.at(t));
  }
  piece.set_constants(std::move(constants));
  return piece;
}

} // namespace

int firstDataDependentOp(const plan::Plan &p) {
  for (int o = 0; o < p.ops_size(); ++o)
    if (isDataDependent(p.ops(o)))
      return o;
  return -1;
}

StatusOr<std::vector<PlanPiece>> splitAtDataDependentOps(const plan::Plan &p) {
  int first = firstDataDependentOp(p);
  if (p.states_size())
    return unimplemented("op '", p.ops(first).name(), "' (",
                         p.ops(first).kind(),
                         "): data-dependent result shapes in a plan with "
                         "state are not supported");
  const int numTensors = p.tensors_size();
  // Pieces: runs of ordinary ops, and each data-dependent op alone.
  std::vector<std::pair<int, int>> ranges;
  for (int o = 0; o < p.ops_size(); ++o) {
    if (isDataDependent(p.ops(o)) || ranges.empty() ||
        isDataDependent(p.ops(ranges.back().first)))
      ranges.push_back({o, o + 1});
    else
      ranges.back().second = o + 1;
  }
  const int numPieces = static_cast<int>(ranges.size());
  std::vector<int> producer(numTensors, -1), lastReader(numTensors, -1);
  for (int k = 0; k < numPieces; ++k)
    for (int o = ranges[k].first; o < ranges[k].second; ++o) {
      for (int t : p.ops(o).outputs())
        producer[t] = k;
      for (int t : p.ops(o).inputs())
        lastReader[t] = k;
    }
  for (const plan::Binding &b : p.outputs())
    lastReader[b.tensor()] = numPieces;

  std::vector<PlanPiece> pieces(numPieces);
  for (int k = 0; k < numPieces; ++k) {
    PlanPiece &piece = pieces[k];
    auto [begin, end] = ranges[k];
    std::set<int> seen;
    for (int o = begin; o < end; ++o)
      for (int t : p.ops(o).inputs())
        if (producer[t] != k &&
            p.tensors(t).kind() != plan::TensorInfo::CONSTANT &&
            seen.insert(t).second)
          piece.inputs.push_back(t);
    for (int o = begin; o < end; ++o)
      for (int t : p.ops(o).outputs())
        if (lastReader[t] > k)
          piece.outputs.push_back(t);
    if (isDataDependent(p.ops(begin))) {
      piece.hostOp = begin;
      piece.inputs.assign(p.ops(begin).inputs().begin(),
                          p.ops(begin).inputs().end());
      piece.outputs.assign(p.ops(begin).outputs().begin(),
                           p.ops(begin).outputs().end());
      continue;
    }
    piece.plan = pieceOf(p, begin, end, piece.inputs, piece.outputs, k);
  }
  return pieces;
}

} // namespace gopt::runtime
