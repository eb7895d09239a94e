//===- HostShapeValues.cpp - Shape values computed on the host ------------===//
#include "HostShapeValues.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <cstring>

namespace gopt::runtime {

namespace {

std::string label(const plan::Op &op) {
  return "op '" + op.name() + "' (" + op.kind() + ")";
}

} // namespace

Status HostShapeValues::init(const plan::Plan &p) {
  const int numTensors = p.tensors_size();
  hostOp_.assign(p.ops_size(), false);
  values_.assign(numTensors, Tensor());
  ints_.assign(numTensors, {});
  hasInts_.assign(numTensors, false);
  reals_.assign(numTensors, {});
  hasReals_.assign(numTensors, false);
  valueInputs_.clear();
  // Per tensor whose value the host needs: the op whose shape it decides
  // (for errors), -1 when not needed.
  std::vector<int> neededBy(numTensors, -1);
  std::vector<int> producer(numTensors, -1);
  for (int o = 0; o < p.ops_size(); ++o) {
    for (int t : p.ops(o).outputs())
      producer[t] = o;
    if (const OpSchema *schema = findOpSchema(p.ops(o).kind()))
      for (int operand : schema->hostValueOperands)
        if (operand < p.ops(o).inputs_size())
          neededBy[p.ops(o).inputs(operand)] = o;
  }
  // Ops come in dependency order, so one backward sweep finds every op a
  // needed value is computed by.
  for (int o = p.ops_size() - 1; o >= 0; --o) {
    const plan::Op &op = p.ops(o);
    int user = -1;
    for (int t : op.outputs())
      if (neededBy[t] >= 0)
        user = neededBy[t];
    if (user < 0)
      continue;
    hostOp_[o] = true;
    const OpSchema *schema = findOpSchema(op.kind());
    if (schema && schema->readsOperandShapesOnly)
      continue;
    for (int t : op.inputs())
      if (neededBy[t] < 0)
        neededBy[t] = user;
  }
  for (int t = 0; t < numTensors; ++t) {
    if (neededBy[t] < 0)
      continue;
    auto kind = p.tensors(t).kind();
    if (kind == plan::TensorInfo::CONSTANT || producer[t] >= 0)
      continue;
    if (kind == plan::TensorInfo::INPUT) {
      valueInputs_.push_back(t);
      continue;
    }
    return unimplemented(label(p.ops(neededBy[t])),
                         ": its result shape depends on the value of state '",
                         p.tensors(t).name(),
                         "'; only values computed from inputs and constants "
                         "are resolved before a run");
  }
  return Status::success();
}

void HostShapeValues::record(int t, const Tensor &v) {
  values_[t] = v;
  hasInts_[t] = v.dtype() == DType::kI64 || v.dtype() == DType::kI32;
  hasReals_[t] = hasInts_[t] || v.dtype() == DType::kF32;
  ints_[t].clear();
  reals_[t].clear();
  for (int64_t i = 0; hasReals_[t] && i < v.numElements(); ++i) {
    switch (v.dtype()) {
    case DType::kI64:
      ints_[t].push_back(v.data<int64_t>()[i]);
      reals_[t].push_back(static_cast<double>(ints_[t].back()));
      break;
    case DType::kI32:
      ints_[t].push_back(v.data<int32_t>()[i]);
      reals_[t].push_back(static_cast<double>(ints_[t].back()));
      break;
    default:
      reals_[t].push_back(v.data<float>()[i]);
    }
  }
}

Status HostShapeValues::loadConstant(const plan::Plan &p, int t, DType dtype,
                                     const Shape &shape) {
  const plan::TensorInfo &info = p.tensors(t);
  // A copy: the blob's bytes need not be aligned for the element type.
  Tensor value = Tensor::allocate(dtype, shape);
  if (info.constant_size() < value.byteSize())
    return invalidArgument("constant '", info.name(), "' has ",
                           info.constant_size(), " bytes, its shape ",
                           shapeToString(shape), " needs ", value.byteSize());
  if (value.byteSize())
    std::memcpy(value.data(), p.constants().data() + info.constant_offset(),
                value.byteSize());
  record(t, value);
  return Status::success();
}

Status HostShapeValues::setInputValue(const plan::Plan &p, int t,
                                      const Tensor &value) {
  if (value.numElements() > kMaxElements)
    return invalidArgument("input '", p.tensors(t).name(),
                           "' decides a shape but has ", value.numElements(),
                           " elements; the host reads shape values of at most ",
                           kMaxElements);
  Tensor copy = Tensor::allocate(value.dtype(), value.shape());
  if (value.byteSize())
    std::memcpy(copy.data(), value.data(), value.byteSize());
  record(t, copy);
  return Status::success();
}

bool HostShapeValues::inputValueChanged(int t, const Tensor &value) const {
  const Tensor &seen = values_[t];
  return seen.empty() != value.empty() || seen.dtype() != value.dtype() ||
         seen.shape() != value.shape() ||
         (value.byteSize() &&
          std::memcmp(seen.data(), value.data(), value.byteSize()) != 0);
}

Status HostShapeValues::compute(const plan::Plan &p, const plan::Op &op, int o,
                                const std::vector<DType> &dtypes,
                                const std::vector<Shape> &shapes) {
  const OpSchema *schema = findOpSchema(op.kind());
  KernelConfig config;
  config.op = &op;
  config.opIndex = o;
  config.threads = 1;
  std::vector<Tensor> inputs, outputs;
  for (int t : op.inputs()) {
    config.inputTypes.push_back(dtypes[t]);
    config.inputShapes.push_back(shapes[t]);
    const plan::TensorInfo &info = p.tensors(t);
    if (info.kind() == plan::TensorInfo::CONSTANT)
      GOPT_RETURN_IF_ERROR(loadConstant(p, t, dtypes[t], shapes[t]));
    config.constantInputs.push_back(info.kind() == plan::TensorInfo::CONSTANT
                                        ? values_[t].data()
                                        : nullptr);
    // Operands of a shape-only op (shape) need no data.
    inputs.push_back(values_[t].empty()
                         ? Tensor::view(dtypes[t], shapes[t], nullptr)
                         : values_[t]);
    if (values_[t].empty() && !(schema && schema->readsOperandShapesOnly))
      return internalError("operand '", info.name(),
                           "' was not computed on the host");
  }
  for (int t : op.outputs()) {
    if (numElements(shapes[t]) > kMaxElements)
      return invalidArgument(
          "result '", p.tensors(t).name(), "' decides a shape but has ",
          numElements(shapes[t]), " elements (shape ", shapeToString(shapes[t]),
          "); the host computes shape values of at most ", kMaxElements);
    config.outputTypes.push_back(dtypes[t]);
    config.outputShapes.push_back(shapes[t]);
    outputs.push_back(Tensor::allocate(dtypes[t], shapes[t]));
  }
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                        KernelRegistry::global().create("cpu", config));
  GOPT_RETURN_IF_ERROR(kernel->run(inputs, outputs));
  for (int r = 0; r < op.outputs_size(); ++r)
    record(op.outputs(r), outputs[r]);
  return Status::success();
}

} // namespace gopt::runtime
