//===- GoptToPlan.cpp - Lower a gopt graph to a runtime plan --------------===//

#include "gopt/Conversion/GoptToPlan.h"
#include "gopt/Conversion/PlanOp.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/PlanNames.h"
#include "gopt/Dialect/Gopt/IR/TrainingAttrs.h"

#include "gopt/runtime/PlanBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
namespace rt = gopt::runtime;

namespace gopt {

FailureOr<func::FuncOp> findGraphFunction(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (func.getSymName() == "main")
      return func;
    funcs.push_back(func);
  }
  if (funcs.size() == 1)
    return funcs.front();
  InFlightDiagnostic diag = module.emitError()
                            << "expects one graph function (or one named "
                               "@main) to lower, found "
                            << funcs.size();
  for (func::FuncOp func : funcs)
    diag.attachNote(func.getLoc()) << "candidate @" << func.getSymName();
  return failure();
}

namespace {

/// Maps an element type to the plan's dtype, or kInvalid.
rt::DType toDType(Type type) {
  if (type.isF32())
    return rt::DType::kF32;
  if (type.isF16())
    return rt::DType::kF16;
  if (type.isBF16())
    return rt::DType::kBF16;
  if (type.isF64())
    return rt::DType::kF64;
  if (type.isInteger(1))
    return rt::DType::kBool;
  // isInteger(w) holds for every signedness: ask for the one meant.
  if (type.isSignlessInteger(8))
    return rt::DType::kI8;
  if (type.isSignlessInteger(16))
    return rt::DType::kI16;
  if (type.isSignlessInteger(32))
    return rt::DType::kI32;
  if (type.isSignlessInteger(64))
    return rt::DType::kI64;
  if (type.isUnsignedInteger(8))
    return rt::DType::kU8;
  if (type.isUnsignedInteger(16))
    return rt::DType::kU16;
  if (type.isUnsignedInteger(32))
    return rt::DType::kU32;
  if (type.isUnsignedInteger(64))
    return rt::DType::kU64;
  if (type.isFloat8E4M3FN())
    return rt::DType::kF8E4M3FN;
  if (type.isFloat8E4M3FNUZ())
    return rt::DType::kF8E4M3FNUZ;
  if (type.isFloat8E5M2())
    return rt::DType::kF8E5M2;
  if (type.isFloat8E5M2FNUZ())
    return rt::DType::kF8E5M2FNUZ;
  if (type.isSignlessInteger(4))
    return rt::DType::kI4;
  if (type.isUnsignedInteger(4))
    return rt::DType::kU4;
  return rt::DType::kInvalid;
}

rt::Shape toShape(RankedTensorType type) {
  rt::Shape shape;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? -1 : dim);
  return shape;
}

class PlanLowering {
public:
  explicit PlanLowering(func::FuncOp func)
      : func(func), owner(func), builder(func.getSymName().str()) {}
  /// The plan of a region of a control-flow op: its block's arguments are
  /// the inputs, its yield's operands the outputs.
  PlanLowering(Operation *regionOwner, Region &region, std::string name)
      : owner(regionOwner), region(&region), builder(std::move(name)) {}

  FailureOr<gopt::plan::Plan> run();

private:
  LogicalResult lowerConstant(ConstantOp op);
  /// A constant's or a state's initial value (zeros when `attr` is null).
  FailureOr<rt::Tensor> toHostTensor(Operation *where, Attribute attr,
                                     RankedTensorType type);
  LogicalResult lowerStateArgument(BlockArgument arg);
  /// Result `index` (`value`) is the new value of state `stateName`.
  LogicalResult lowerStateUpdate(Operation *ret, unsigned index, Value value,
                                 StringRef stateName);
  struct StateInfo {
    unsigned argument;
    int tensor;
  };
  llvm::StringMap<StateInfo> stateTensors;
  LogicalResult lowerOp(Operation *op);
  /// Each region of `op` becomes a subplan of this plan, listed in the
  /// plan op's `regions`.
  LogicalResult lowerRegions(Operation *op, plan::Op &planOp);
  FailureOr<gopt::plan::Plan> runRegion();
  /// A graph or region argument as a plan input.
  LogicalResult lowerInput(BlockArgument arg);
  /// The ops of `body` (constants become constant tensors).
  LogicalResult lowerOps(Block &body);
  /// Copies `value` into a fresh output tensor named `name`.
  LogicalResult addOutputCopy(Operation *user, Value value,
                              const std::string &name);
  FailureOr<int> lookup(Operation *user, Value value);
  FailureOr<rt::DType> getDType(Operation *where, Type type);

  func::FuncOp func; // null for a region's plan
  Operation *owner;  // where errors go: the function or the region's op
  Region *region = nullptr;
  rt::PlanBuilder builder;
  llvm::DenseMap<Value, int> tensors;
  /// The names of ops and tensors; `names.outputs` are the values returned
  /// by the function that are output tensors themselves.
  PlanNames names;
};

FailureOr<rt::DType> PlanLowering::getDType(Operation *where, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  rt::DType dtype =
      tensor ? toDType(tensor.getElementType()) : rt::DType::kInvalid;
  if (dtype == rt::DType::kInvalid) {
    if (where)
      where->emitOpError("cannot lower a value of type ")
          << type << " to a plan (expects a ranked tensor of f32, f16, "
          << "bf16, i1, i8, i32 or i64)";
    else
      owner->emitOpError("cannot lower an argument of type ")
          << type << " to a plan";
    return failure();
  }
  return dtype;
}

FailureOr<int> PlanLowering::lookup(Operation *user, Value value) {
  auto it = tensors.find(value);
  if (it != tensors.end())
    return it->second;
  user->emitOpError("uses a value the plan lowering has not seen (an op "
                    "outside the gopt dialect?)");
  return failure();
}

FailureOr<rt::Tensor> PlanLowering::toHostTensor(Operation *where,
                                                 Attribute attr,
                                                 RankedTensorType type) {
  FailureOr<rt::DType> dtype = getDType(where, type);
  if (failed(dtype))
    return failure();
  auto emitError = [&]() {
    return where ? where->emitOpError() : func.emitOpError();
  };
  size_t elementSize = rt::dtypeSize(*dtype);
  int64_t count = type.getNumElements();
  rt::Tensor value = rt::Tensor::allocate(*dtype, toShape(type));
  auto *out = static_cast<char *>(value.data());
  // A splat (or an absent value) of a huge type is compact in the IR; the
  // plan holds every byte.
  if (!out && count > 0)
    return emitError() << "has a value of type " << type
                       << " whose bytes cannot be allocated",
           failure();

  if (!attr) {
    std::memset(out, 0, count * elementSize);
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.getType() != type)
      return emitError() << "has a value of type " << dense.getType()
                         << " for a tensor of type " << type,
             failure();
    if (*dtype == rt::DType::kBool) {
      int64_t i = 0;
      for (bool b : dense.getValues<bool>())
        out[i++] = b ? 1 : 0;
    } else if (dense.isSplat()) {
      ArrayRef<char> raw = dense.getRawData();
      for (int64_t i = 0; i < count; ++i)
        std::memcpy(out + i * elementSize, raw.data(), elementSize);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      if (raw.size() != count * elementSize)
        return emitError() << "has " << raw.size() << " bytes of data for "
                           << count << " elements of " << elementSize
                           << " bytes",
               failure();
      std::memcpy(out, raw.data(), raw.size());
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (resource.getType() != type)
      return emitError() << "has a value of type " << resource.getType()
                         << " for a tensor of type " << type,
             failure();
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError() << "refers to resource '"
                         << resource.getRawHandle().getKey()
                         << "' whose data is missing (was the IR printed with "
                            "-mlir-elide-resource-strings-if-larger?)",
             failure();
    ArrayRef<char> raw = blob->getData();
    if (raw.size() != count * elementSize)
      return emitError() << "has a resource of " << raw.size() << " bytes for "
                         << count << " elements of " << elementSize << " bytes",
             failure();
    std::memcpy(out, raw.data(), raw.size());
  } else {
    return emitError() << "has a value kind the plan lowering cannot read: "
                       << attr,
           failure();
  }
  // MLIR stores an i4/ui4 element in a byte but defines only its low 4
  // bits; the plan's i4 is sign-extended, its u4 zero-extended.
  if (*dtype == rt::DType::kI4 || *dtype == rt::DType::kU4) {
    auto *bytes = reinterpret_cast<uint8_t *>(out);
    for (int64_t i = 0; i < count; ++i) {
      uint8_t nibble = bytes[i] & 0x0F;
      bytes[i] =
          *dtype == rt::DType::kI4 && (nibble & 0x08) ? nibble | 0xF0 : nibble;
    }
  }
  return value;
}

LogicalResult PlanLowering::lowerConstant(ConstantOp op) {
  FailureOr<rt::Tensor> value =
      toHostTensor(op, op.getValue(), cast<RankedTensorType>(op.getType()));
  if (failed(value))
    return failure();
  tensors[op.getResult()] =
      builder.addConstant(names.tensors.lookup(op.getResult()), *value);
  return success();
}

LogicalResult PlanLowering::lowerStateArgument(BlockArgument arg) {
  unsigned index = arg.getArgNumber();
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !type.hasStaticShape())
    return func.emitOpError("state argument ")
           << index << " must have a static shape, got " << arg.getType();
  std::string name = names.tensors.lookup(arg);
  int tensor;
  if (Attribute value = func.getArgAttr(index, attrs::kInitialValue)) {
    FailureOr<rt::Tensor> initial = toHostTensor(nullptr, value, type);
    if (failed(initial))
      return failure();
    tensor = builder.addState(name, *initial);
  } else {
    FailureOr<rt::DType> dtype = getDType(nullptr, type);
    if (failed(dtype))
      return failure();
    tensor = builder.addState(name, *dtype, toShape(type));
  }
  tensors[arg] = tensor;
  stateTensors[name] = {index, tensor};
  return success();
}

LogicalResult PlanLowering::lowerStateUpdate(Operation *ret, unsigned index,
                                             Value value, StringRef stateName) {
  auto it = stateTensors.find(stateName);
  if (it == stateTensors.end())
    return func.emitOpError("result ") << index << " updates '" << stateName
                                       << "', which is not a state argument";
  Type stateType = func.getArgumentTypes()[it->second.argument];
  if (failed(verifyCompatibleShape(value.getType(), stateType)) ||
      getElementTypeOrSelf(value.getType()) != getElementTypeOrSelf(stateType))
    return func.emitOpError("result ")
           << index << " of type " << value.getType() << " updates '"
           << stateName << "' of type " << stateType;
  FailureOr<int> source = lookup(ret, value);
  if (failed(source))
    return failure();
  // The runtime copies the update into the state after each run; the
  // update must be a tensor of its own, produced during the run.
  Operation *def = value.getDefiningOp();
  int update = *source;
  if (!def || isa<ConstantOp>(def)) {
    auto type = cast<RankedTensorType>(value.getType());
    FailureOr<rt::DType> dtype = getDType(ret, type);
    if (failed(dtype))
      return failure();
    update = builder.addIntermediate(stateName.str() + "/update", *dtype,
                                     toShape(type));
    builder.addOp("identity", stateName.str() + "/update", {*source}, {update});
  }
  builder.setStateUpdate(it->second.tensor, update);
  return success();
}

LogicalResult PlanLowering::lowerOp(Operation *op) {
  if (!isa_and_nonnull<GoptDialect>(op->getDialect()))
    return op->emitOpError("cannot be lowered to a plan: only gopt ops run "
                           "in the runtime");
  std::vector<int> inputs, outputs;
  for (Value operand : op->getOperands()) {
    FailureOr<int> index = lookup(op, operand);
    if (failed(index))
      return failure();
    inputs.push_back(*index);
  }
  for (OpResult result : op->getResults()) {
    FailureOr<rt::DType> dtype = getDType(op, result.getType());
    if (failed(dtype))
      return failure();
    rt::Shape shape = toShape(cast<RankedTensorType>(result.getType()));
    const std::string &tensorName = names.tensors[result];
    int index = names.outputs.count(result)
                    ? builder.addOutput(tensorName, *dtype, shape)
                    : builder.addIntermediate(tensorName, *dtype, shape);
    tensors[result] = index;
    outputs.push_back(index);
  }

  plan::Op planOp = toPlanOp(op);
  if (op->getNumRegions() && failed(lowerRegions(op, planOp)))
    return failure();
  rt::AttrMap attrs(planOp.attrs().begin(), planOp.attrs().end());
  builder.addOp(planOp.kind(), names.ops.lookup(op), inputs, outputs, attrs,
                planOp.device());
  *builder.proto().mutable_ops()->rbegin()->mutable_regions() =
      planOp.regions();
  return success();
}

LogicalResult PlanLowering::lowerRegions(Operation *op, plan::Op &planOp) {
  for (Region &r : op->getRegions()) {
    std::string name =
        names.ops.lookup(op) + "/region" + std::to_string(r.getRegionNumber());
    FailureOr<gopt::plan::Plan> subplan =
        PlanLowering(op, r, std::move(name)).run();
    if (failed(subplan))
      return failure();
    planOp.add_regions(builder.proto().subplans_size());
    *builder.proto().add_subplans() = std::move(*subplan);
  }
  return success();
}

LogicalResult PlanLowering::addOutputCopy(Operation *user, Value value,
                                          const std::string &name) {
  FailureOr<int> source = lookup(user, value);
  if (failed(source))
    return failure();
  auto type = cast<RankedTensorType>(value.getType());
  FailureOr<rt::DType> dtype = getDType(user, type);
  if (failed(dtype))
    return failure();
  int output = builder.addOutput(name, *dtype, toShape(type));
  builder.addOp("identity", name + "/copy", {*source}, {output});
  return success();
}

LogicalResult PlanLowering::lowerInput(BlockArgument arg) {
  FailureOr<rt::DType> dtype =
      getDType(region ? owner : nullptr, arg.getType());
  if (failed(dtype))
    return failure();
  tensors[arg] =
      builder.addInput(names.tensors.lookup(arg), *dtype,
                       toShape(cast<RankedTensorType>(arg.getType())));
  return success();
}

LogicalResult PlanLowering::lowerOps(Block &body) {
  for (Operation &op : body.without_terminator()) {
    LogicalResult lowered = isa<ConstantOp>(op)
                                ? lowerConstant(cast<ConstantOp>(op))
                                : lowerOp(&op);
    if (failed(lowered))
      return failure();
  }
  return success();
}

FailureOr<gopt::plan::Plan> PlanLowering::runRegion() {
  Block &body = region->front();
  names = getRegionPlanNames(*region);
  for (BlockArgument arg : body.getArguments())
    if (failed(lowerInput(arg)))
      return failure();
  if (failed(lowerOps(body)))
    return failure();
  Operation *yield = body.getTerminator();
  for (auto [i, value] : llvm::enumerate(yield->getOperands()))
    if (!names.outputs.count(value) &&
        failed(addOutputCopy(yield, value, "output" + std::to_string(i))))
      return failure();
  // Outputs are bound in the yield's order: the runtime reads them by
  // position.
  auto *bindings = builder.proto().mutable_outputs();
  auto yieldIndex = [](const plan::Binding &binding) {
    return std::stoi(binding.name().substr(std::strlen("output")));
  };
  std::stable_sort(bindings->begin(), bindings->end(),
                   [&](const plan::Binding &x, const plan::Binding &y) {
                     return yieldIndex(x) < yieldIndex(y);
                   });
  builder.proto().set_producer("gopt-translate --emit-plan");
  rt::StatusOr<rt::Plan> plan = builder.build();
  if (!plan.ok())
    return owner->emitOpError("region lowered to an invalid plan: ")
               << plan.status().message(),
           failure();
  return plan->proto();
}

FailureOr<gopt::plan::Plan> PlanLowering::run() {
  if (region)
    return runRegion();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("expects a graph function with one block"),
           failure();
  Block &body = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return func.emitOpError("expects the graph to end in func.return"),
           failure();

  // A value returned once and produced by an op becomes an output tensor
  // directly (names.outputs); others (arguments, constants, repeated
  // results) get a copy.
  names = getPlanNames(func);

  for (BlockArgument arg : body.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), attrs::kState)) {
      if (failed(lowerStateArgument(arg)))
        return failure();
      continue;
    }
    if (failed(lowerInput(arg)))
      return failure();
  }
  if (failed(lowerOps(body)))
    return failure();

  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    if (auto updates =
            func.getResultAttrOfType<StringAttr>(i, attrs::kUpdates)) {
      if (failed(lowerStateUpdate(ret, i, value, updates.getValue())))
        return failure();
      continue;
    }
    if (names.outputs.count(value))
      continue;
    // Copy into a fresh output tensor so every output has a tensor of its
    // own, as the runtime's bindings expect.
    if (failed(addOutputCopy(
            ret, value,
            getPlanBindingName(func.getResultAttrDict(i), "output", i))))
      return failure();
  }

  builder.proto().set_producer("gopt-translate --emit-plan");
  rt::StatusOr<rt::Plan> plan = builder.build();
  if (!plan.ok())
    return func.emitOpError("lowered to an invalid plan: ")
               << plan.status().message(),
           failure();
  return plan->proto();
}

} // namespace

FailureOr<gopt::plan::Plan> lowerToPlan(func::FuncOp func) {
  return PlanLowering(func).run();
}

} // namespace gopt
