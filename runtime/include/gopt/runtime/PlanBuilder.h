//===- PlanBuilder.h - Build plans in C++ -----------------------*- C++ -*-===//
//
// A thin convenience over the plan proto for tests, tools and embedders:
//
//   PlanBuilder b("tiny");
//   int x = b.addInput("x", DType::kF32, {-1, 4});
//   int w = b.addConstant("w", weights);              // a Tensor
//   int y = b.addOutput("y", DType::kF32, {-1, 2});
//   b.addOp("matmul", "mm", {x, w}, {y});
//   StatusOr<Plan> plan = b.build();
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_PLANBUILDER_H
#define GOPT_RUNTIME_PLANBUILDER_H

#include "gopt/runtime/Plan.h"

#include <map>
#include <string>
#include <vector>

namespace gopt::runtime {

plan::AttrValue intAttr(int64_t value);
plan::AttrValue floatAttr(double value);
plan::AttrValue stringAttr(const std::string &value);
plan::AttrValue boolAttr(bool value);
plan::AttrValue intsAttr(const std::vector<int64_t> &values);
plan::AttrValue floatsAttr(const std::vector<double> &values);

using AttrMap = std::map<std::string, plan::AttrValue>;

class PlanBuilder {
public:
  explicit PlanBuilder(const std::string &name = "plan");

  // Each returns the new tensor's index. An input/output/state is also bound
  // under its tensor name.
  int addInput(const std::string &name, DType dtype, const Shape &shape);
  int addOutput(const std::string &name, DType dtype, const Shape &shape);
  int addIntermediate(const std::string &name, DType dtype, const Shape &shape);
  int addConstant(const std::string &name, const Tensor &value);
  int addState(const std::string &name, const Tensor &initialValue);
  // A state that starts as zeros (stores no bytes in the plan).
  int addState(const std::string &name, DType dtype, const Shape &shape);
  void setStateUpdate(int stateTensor, int updateTensor);
  // Binds an existing tensor as an output too (e.g. an intermediate).
  void bindOutput(const std::string &name, int tensor);
  void addOp(const std::string &kind, const std::string &name,
             const std::vector<int> &inputs, const std::vector<int> &outputs,
             const AttrMap &attrs = {}, const std::string &device = "");

  plan::Plan &proto() { return proto_; }
  // Validates and wraps the proto.
  StatusOr<Plan> build() const;

private:
  int addTensor(const std::string &name, DType dtype, const Shape &shape,
                plan::TensorInfo::Kind kind);
  uint64_t appendConstantBytes(const void *data, size_t size);

  plan::Plan proto_;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_PLANBUILDER_H
