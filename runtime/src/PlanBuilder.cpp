//===- PlanBuilder.cpp - Build plans in C++ -------------------------------===//
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/MemoryPlanner.h"

namespace gopt::runtime {

plan::AttrValue intAttr(int64_t value) {
  plan::AttrValue a;
  a.set_i(value);
  return a;
}
plan::AttrValue floatAttr(double value) {
  plan::AttrValue a;
  a.set_f(value);
  return a;
}
plan::AttrValue stringAttr(const std::string &value) {
  plan::AttrValue a;
  a.set_s(value);
  return a;
}
plan::AttrValue boolAttr(bool value) {
  plan::AttrValue a;
  a.set_b(value);
  return a;
}
plan::AttrValue intsAttr(const std::vector<int64_t> &values) {
  plan::AttrValue a;
  // Set the oneof even for an empty list ("reduce over every axis").
  plan::IntList *list = a.mutable_ints();
  for (int64_t v : values)
    list->add_values(v);
  return a;
}
plan::AttrValue floatsAttr(const std::vector<double> &values) {
  plan::AttrValue a;
  plan::FloatList *list = a.mutable_floats();
  for (double v : values)
    list->add_values(v);
  return a;
}

PlanBuilder::PlanBuilder(const std::string &name) {
  proto_.set_format_version(kCurrentPlanFormatVersion);
  proto_.set_name(name);
  proto_.set_producer("gopt::runtime::PlanBuilder");
}

int PlanBuilder::addTensor(const std::string &name, DType dtype,
                           const Shape &shape, plan::TensorInfo::Kind kind) {
  plan::TensorInfo *t = proto_.add_tensors();
  t->set_name(name);
  t->set_dtype(toProtoDType(dtype));
  for (int64_t d : shape)
    t->add_shape(d);
  t->set_kind(kind);
  return proto_.tensors_size() - 1;
}

uint64_t PlanBuilder::appendConstantBytes(const void *data, size_t size) {
  std::string *blob = proto_.mutable_constants();
  size_t offset = alignUp(blob->size(), kConstantAlignment);
  blob->resize(offset, '\0');
  blob->append(static_cast<const char *>(data), size);
  return offset;
}

int PlanBuilder::addInput(const std::string &name, DType dtype,
                          const Shape &shape) {
  int t = addTensor(name, dtype, shape, plan::TensorInfo::INPUT);
  plan::Binding *b = proto_.add_inputs();
  b->set_name(name);
  b->set_tensor(t);
  return t;
}

int PlanBuilder::addOutput(const std::string &name, DType dtype,
                           const Shape &shape) {
  int t = addTensor(name, dtype, shape, plan::TensorInfo::OUTPUT);
  bindOutput(name, t);
  return t;
}

void PlanBuilder::bindOutput(const std::string &name, int tensor) {
  plan::Binding *b = proto_.add_outputs();
  b->set_name(name);
  b->set_tensor(tensor);
}

int PlanBuilder::addIntermediate(const std::string &name, DType dtype,
                                 const Shape &shape) {
  return addTensor(name, dtype, shape, plan::TensorInfo::INTERMEDIATE);
}

int PlanBuilder::addConstant(const std::string &name, const Tensor &value) {
  int t =
      addTensor(name, value.dtype(), value.shape(), plan::TensorInfo::CONSTANT);
  plan::TensorInfo *info = proto_.mutable_tensors(t);
  info->set_constant_offset(
      appendConstantBytes(value.data(), value.byteSize()));
  info->set_constant_size(value.byteSize());
  return t;
}

int PlanBuilder::addState(const std::string &name, const Tensor &initial) {
  int t = addTensor(name, initial.dtype(), initial.shape(),
                    plan::TensorInfo::STATE);
  plan::TensorInfo *info = proto_.mutable_tensors(t);
  info->set_constant_offset(
      appendConstantBytes(initial.data(), initial.byteSize()));
  info->set_constant_size(initial.byteSize());
  plan::StateBinding *b = proto_.add_states();
  b->set_name(name);
  b->set_tensor(t);
  return t;
}

int PlanBuilder::addState(const std::string &name, DType dtype,
                          const Shape &shape) {
  int t = addTensor(name, dtype, shape, plan::TensorInfo::STATE);
  plan::StateBinding *b = proto_.add_states();
  b->set_name(name);
  b->set_tensor(t);
  return t;
}

void PlanBuilder::setStateUpdate(int stateTensor, int updateTensor) {
  for (plan::StateBinding &b : *proto_.mutable_states())
    if (b.tensor() == stateTensor)
      b.set_update_tensor(updateTensor);
}

void PlanBuilder::addOp(const std::string &kind, const std::string &name,
                        const std::vector<int> &inputs,
                        const std::vector<int> &outputs, const AttrMap &attrs,
                        const std::string &device) {
  plan::Op *op = proto_.add_ops();
  op->set_kind(kind);
  op->set_name(name);
  for (int i : inputs)
    op->add_inputs(i);
  for (int o : outputs)
    op->add_outputs(o);
  for (const auto &[key, value] : attrs)
    (*op->mutable_attrs())[key] = value;
  op->set_device(device);
}

StatusOr<Plan> PlanBuilder::build() const {
  return Plan::fromProto(proto_, proto_.name());
}

} // namespace gopt::runtime
