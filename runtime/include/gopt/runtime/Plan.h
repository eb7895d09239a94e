//===- Plan.h - A loaded, validated execution plan --------------*- C++ -*-===//
#ifndef GOPT_RUNTIME_PLAN_H
#define GOPT_RUNTIME_PLAN_H

#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"
#include "gopt/runtime/plan.pb.h"

#include <memory>
#include <string>

namespace gopt::runtime {

// The plan format this runtime writes and the newest it can read.
constexpr uint32_t kCurrentPlanFormatVersion = 1;
// Every constant's offset in the blob is a multiple of this.
constexpr size_t kConstantAlignment = 64;

DType fromProtoDType(plan::DType dtype);
plan::DType toProtoDType(DType dtype);

// An immutable plan that passed validation. Copies share the proto.
class Plan {
public:
  // `origin` names the source in error messages (a path or "<bytes>").
  static StatusOr<Plan> loadFromFile(const std::string &path);
  static StatusOr<Plan> loadFromBytes(const std::string &bytes,
                                      const std::string &origin = "<bytes>");
  static StatusOr<Plan> fromProto(plan::Plan proto,
                                  const std::string &origin = "<proto>");

  // A plan over a proto its creator keeps and may change between runs (the
  // session's copy whose dynamic ops are rewritten into their static ops);
  // not validated: the creator made it from a validated plan.
  static Plan sharing(std::shared_ptr<const plan::Plan> proto,
                      const std::string &origin);

  Status saveToFile(const std::string &path) const;
  std::string serialize() const;

  const plan::Plan &proto() const { return *proto_; }
  const std::string &origin() const { return origin_; }

  // Index of the tensor bound as input/output `name`, or -1.
  int inputTensor(const std::string &name) const;
  int outputTensor(const std::string &name) const;

private:
  std::shared_ptr<const plan::Plan> proto_;
  std::string origin_;
};

// Checks what the runtime relies on: a known format version, tensor indices
// in range, every tensor defined before use (topological order), every op
// kind known and with a reference kernel, attributes present and typed,
// constants inside the blob and aligned, bindings unique.
Status validatePlan(const plan::Plan &proto);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_PLAN_H
