//===- Plan.cpp - Loading and validating plans ----------------------------===//
#include "gopt/runtime/Plan.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/cpu/CpuSupport.h"

#include <fstream>
#include <set>
#include <sstream>

namespace gopt::runtime {

DType fromProtoDType(plan::DType dtype) {
  switch (dtype) {
  case plan::F32:
    return DType::kF32;
  case plan::F16:
    return DType::kF16;
  case plan::BF16:
    return DType::kBF16;
  case plan::I8:
    return DType::kI8;
  case plan::I32:
    return DType::kI32;
  case plan::I64:
    return DType::kI64;
  case plan::BOOL:
    return DType::kBool;
  case plan::U8:
    return DType::kU8;
  case plan::F64:
    return DType::kF64;
  case plan::I16:
    return DType::kI16;
  case plan::U16:
    return DType::kU16;
  case plan::U32:
    return DType::kU32;
  case plan::U64:
    return DType::kU64;
  case plan::F8E4M3FN:
    return DType::kF8E4M3FN;
  case plan::F8E4M3FNUZ:
    return DType::kF8E4M3FNUZ;
  case plan::F8E5M2:
    return DType::kF8E5M2;
  case plan::F8E5M2FNUZ:
    return DType::kF8E5M2FNUZ;
  case plan::I4:
    return DType::kI4;
  case plan::U4:
    return DType::kU4;
  default:
    return DType::kInvalid;
  }
}

plan::DType toProtoDType(DType dtype) {
  return static_cast<plan::DType>(static_cast<int>(dtype));
}

static const char *kindName(plan::TensorInfo::Kind kind) {
  return plan::TensorInfo::Kind_Name(kind).c_str();
}

static std::string tensorLabel(const plan::Plan &p, int index) {
  return "tensor " + std::to_string(index) + " '" + p.tensors(index).name() +
         "'";
}

static std::string opLabel(const plan::Op &op, int index) {
  return "op " + std::to_string(index) + " '" + op.name() + "' (" + op.kind() +
         ")";
}

// Control flow nested deeper than this is refused: plans come from files,
// and validation and sessions recurse once per level.
constexpr int kMaxRegionDepth = 16;

static Status validatePlanAt(const plan::Plan &p, int depth);

Status validatePlan(const plan::Plan &p) { return validatePlanAt(p, 0); }

static Status validatePlanAt(const plan::Plan &p, int depth) {
  if (depth > kMaxRegionDepth)
    return invalidArgument("control flow nested deeper than ", kMaxRegionDepth,
                           " levels");
  if (p.format_version() == 0)
    return invalidArgument("not a gopt plan: format_version is missing");
  if (p.format_version() > kCurrentPlanFormatVersion)
    return failedPrecondition("plan format version ", p.format_version(),
                              " is newer than this runtime supports (",
                              kCurrentPlanFormatVersion,
                              "); rebuild the runtime or re-emit the plan");
  const int numTensors = p.tensors_size();
  for (int i = 0; i < numTensors; ++i) {
    const plan::TensorInfo &t = p.tensors(i);
    if (fromProtoDType(t.dtype()) == DType::kInvalid)
      return invalidArgument(tensorLabel(p, i), " has no valid dtype");
    if (t.kind() == plan::TensorInfo::KIND_UNSPECIFIED)
      return invalidArgument(tensorLabel(p, i), " has no kind");
    for (int64_t d : t.shape())
      if (d < -1)
        return invalidArgument(tensorLabel(p, i), " has invalid dimension ", d);
    bool hasValue = t.kind() == plan::TensorInfo::CONSTANT ||
                    (t.kind() == plan::TensorInfo::STATE && t.constant_size());
    if (!hasValue)
      continue;
    Shape shape(t.shape().begin(), t.shape().end());
    if (!isFullyStatic(shape))
      return invalidArgument(tensorLabel(p, i),
                             " has a value but a dynamic shape ",
                             shapeToString(shape));
    size_t expected = numElements(shape) * dtypeSize(fromProtoDType(t.dtype()));
    if (t.constant_size() != expected)
      return invalidArgument(tensorLabel(p, i), " has ", t.constant_size(),
                             " constant bytes, its shape needs ", expected);
    if (t.constant_offset() % kConstantAlignment)
      return invalidArgument(tensorLabel(p, i), " constant offset ",
                             t.constant_offset(), " is not ",
                             kConstantAlignment, "-byte aligned");
    if (t.constant_offset() + t.constant_size() > p.constants().size())
      return invalidArgument(tensorLabel(p, i), " constant [",
                             t.constant_offset(), ", +", t.constant_size(),
                             ") lies outside the ", p.constants().size(),
                             "-byte constant blob");
  }

  std::vector<bool> defined(numTensors, false);
  for (int i = 0; i < numTensors; ++i) {
    auto kind = p.tensors(i).kind();
    defined[i] = kind == plan::TensorInfo::INPUT ||
                 kind == plan::TensorInfo::CONSTANT ||
                 kind == plan::TensorInfo::STATE;
  }
  for (int o = 0; o < p.ops_size(); ++o) {
    const plan::Op &op = p.ops(o);
    if (op.kind() == "constant")
      return invalidArgument(opLabel(op, o),
                             ": constants must be CONSTANT tensors, not ops");
    const OpSchema *schema = findOpSchema(op.kind());
    // Every op has a CPU reference kernel (cpuOpKinds() lists them).
    if (!schema || !hasCpuKernel(op.kind()))
      return unimplemented(opLabel(op, o), ": unknown op kind '", op.kind(),
                           "'");
    for (int in : op.inputs()) {
      if (in < 0 || in >= numTensors)
        return invalidArgument(opLabel(op, o), ": input index ", in,
                               " out of range [0, ", numTensors, ")");
      if (!defined[in])
        return invalidArgument(opLabel(op, o), " reads ", tensorLabel(p, in),
                               " before any op defines it (ops must be in "
                               "topological order)");
    }
    for (int out : op.outputs()) {
      if (out < 0 || out >= numTensors)
        return invalidArgument(opLabel(op, o), ": output index ", out,
                               " out of range [0, ", numTensors, ")");
      auto kind = p.tensors(out).kind();
      if (kind != plan::TensorInfo::INTERMEDIATE &&
          kind != plan::TensorInfo::OUTPUT)
        return invalidArgument(opLabel(op, o), " writes ", tensorLabel(p, out),
                               " of kind ", kindName(kind));
      if (defined[out])
        return invalidArgument(opLabel(op, o), " redefines ",
                               tensorLabel(p, out));
      defined[out] = true;
    }
    if (Status s = checkOpAgainstSchema(op, *schema); !s.ok())
      return Status(s.code(), opLabel(op, o) + ": " + s.message());
    if (op.regions_size() != schema->numRegions)
      return invalidArgument(opLabel(op, o), " has ", op.regions_size(),
                             " regions, expected ", schema->numRegions);
    for (int r : op.regions())
      if (r < 0 || r >= p.subplans_size())
        return invalidArgument(opLabel(op, o), ": region index ", r,
                               " out of range [0, ", p.subplans_size(), ")");
  }
  for (int i = 0; i < p.subplans_size(); ++i)
    if (Status s = validatePlanAt(p.subplans(i), depth + 1); !s.ok())
      return Status(s.code(), "subplan " + std::to_string(i) + " '" +
                                  p.subplans(i).name() + "': " + s.message());

  std::set<std::string> names;
  auto checkBinding = [&](const char *what, const std::string &name,
                          int tensor) -> Status {
    if (name.empty())
      return invalidArgument(what, " binding with an empty name");
    if (!names.insert(std::string(what) + ":" + name).second)
      return invalidArgument("duplicate ", what, " binding '", name, "'");
    if (tensor < 0 || tensor >= numTensors)
      return invalidArgument(what, " '", name, "' binds tensor index ", tensor,
                             " out of range [0, ", numTensors, ")");
    return Status::success();
  };
  std::vector<bool> boundInput(numTensors, false);
  for (const plan::Binding &b : p.inputs()) {
    GOPT_RETURN_IF_ERROR(checkBinding("input", b.name(), b.tensor()));
    if (p.tensors(b.tensor()).kind() != plan::TensorInfo::INPUT)
      return invalidArgument("input '", b.name(), "' binds ",
                             tensorLabel(p, b.tensor()), " of kind ",
                             kindName(p.tensors(b.tensor()).kind()));
    boundInput[b.tensor()] = true;
  }
  for (int i = 0; i < numTensors; ++i)
    if (p.tensors(i).kind() == plan::TensorInfo::INPUT && !boundInput[i])
      return invalidArgument(tensorLabel(p, i),
                             " is an INPUT without an input binding");
  for (const plan::Binding &b : p.outputs()) {
    GOPT_RETURN_IF_ERROR(checkBinding("output", b.name(), b.tensor()));
    if (!defined[b.tensor()])
      return invalidArgument("output '", b.name(), "' binds ",
                             tensorLabel(p, b.tensor()), " that no op defines");
  }
  for (const plan::StateBinding &b : p.states()) {
    GOPT_RETURN_IF_ERROR(checkBinding("state", b.name(), b.tensor()));
    if (p.tensors(b.tensor()).kind() != plan::TensorInfo::STATE)
      return invalidArgument("state '", b.name(), "' binds ",
                             tensorLabel(p, b.tensor()), " of kind ",
                             kindName(p.tensors(b.tensor()).kind()));
    if (b.has_update_tensor()) {
      int u = b.update_tensor();
      if (u < 0 || u >= numTensors || !defined[u])
        return invalidArgument("state '", b.name(), "' update tensor ", u,
                               " is out of range or never defined");
      if (p.tensors(u).dtype() != p.tensors(b.tensor()).dtype())
        return invalidArgument("state '", b.name(), "' update ",
                               tensorLabel(p, u), " has another dtype");
    }
  }
  for (int i = 0; i < numTensors; ++i)
    if (!defined[i])
      return invalidArgument(tensorLabel(p, i), " of kind ",
                             kindName(p.tensors(i).kind()),
                             " is never defined by an op");
  return Status::success();
}

StatusOr<Plan> Plan::fromProto(plan::Plan proto, const std::string &origin) {
  if (Status s = validatePlan(proto); !s.ok())
    return Status(s.code(), "plan '" + origin + "': " + s.message());
  Plan p;
  p.proto_ = std::make_shared<const plan::Plan>(std::move(proto));
  p.origin_ = origin;
  return p;
}

Plan Plan::sharing(std::shared_ptr<const plan::Plan> proto,
                   const std::string &origin) {
  Plan p;
  p.proto_ = std::move(proto);
  p.origin_ = origin;
  return p;
}

StatusOr<Plan> Plan::loadFromBytes(const std::string &bytes,
                                   const std::string &origin) {
  plan::Plan proto;
  if (!proto.ParseFromString(bytes))
    return dataLoss("plan '", origin,
                    "': not a valid plan file (corrupt or truncated, ",
                    bytes.size(), " bytes)");
  return fromProto(std::move(proto), origin);
}

StatusOr<Plan> Plan::loadFromFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("cannot open plan file '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return dataLoss("error reading plan file '", path, "'");
  return loadFromBytes(buffer.str(), path);
}

std::string Plan::serialize() const { return proto_->SerializeAsString(); }

Status Plan::saveToFile(const std::string &path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return notFound("cannot open '", path, "' for writing");
  out << serialize();
  out.close();
  if (!out)
    return dataLoss("error writing plan file '", path, "'");
  return Status::success();
}

int Plan::inputTensor(const std::string &name) const {
  for (const plan::Binding &b : proto_->inputs())
    if (b.name() == name)
      return b.tensor();
  return -1;
}

int Plan::outputTensor(const std::string &name) const {
  for (const plan::Binding &b : proto_->outputs())
    if (b.name() == name)
      return b.tensor();
  return -1;
}

} // namespace gopt::runtime
