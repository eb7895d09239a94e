//===- PlaceDevices.cpp - Device placement and host<->device transfers ----===//
//
// --gopt-place-devices gives every gopt op a `device` ("cpu" / "gpu"),
// groups what must run on the host so that values cross devices as rarely
// as possible, duplicates constants per device and inserts one
// `gopt.transfer` per (value, destination device). --gopt-placement-report
// runs the same placement and says per op where and why, and how many
// transfers (and bytes) a naive placement would make compared with this one.
//
// Which device can run an op is asked of the backends' coverage tables
// (gopt/runtime/KernelAvailability.h, data in gopt_plan) about the op as the
// plan lowering would emit it (toPlanOp, gopt/Conversion/PlanOp.h): the same
// answers sessions act on.
//
// Convention: function arguments live on the host, results return to the
// host. Transfers from arguments and to results are "boundary" transfers.
//
//===----------------------------------------------------------------------===//

#include "gopt/Conversion/PlanOp.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"
#include "gopt/runtime/KernelAvailability.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace gopt {
#define GEN_PASS_DEF_PLACEDEVICES
#define GEN_PASS_DEF_PLACEMENTREPORT
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;
namespace rt = gopt::runtime;

namespace {

enum class Device { Cpu, Gpu };

StringRef deviceName(Device d) { return d == Device::Cpu ? "cpu" : "gpu"; }
Device other(Device d) { return d == Device::Cpu ? Device::Gpu : Device::Cpu; }

/// The CUDA kernels handle f32, f16, bf16, i8, ui8, i32, i64 and i1 only
/// (CudaBackend refuses the rest); an op with a value of another type is
/// CPU-only.
bool cudaHandlesTypes(Operation *op, std::string *whyNot) {
  for (ValueRange values :
       {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value v : values) {
      Type t = getElementTypeOrSelf(v.getType());
      if (t.isF64() || t.isSignlessInteger(16) || t.isUnsignedInteger(16) ||
          t.isUnsignedInteger(32) || t.isUnsignedInteger(64) ||
          t.isInteger(4) || t.isFloat8E4M3FN() || t.isFloat8E4M3FNUZ() ||
          t.isFloat8E5M2() || t.isFloat8E5M2FNUZ()) {
        if (whyNot) {
          *whyNot = "element type ";
          llvm::raw_string_ostream(*whyNot) << t << " is CPU-only";
        }
        return false;
      }
    }
  return true;
}

/// The CUDA recurrent ops run on cuDNN's RNN: f32 only, and no peepholes,
/// which are an operand the coverage predicate (attributes) cannot see. An
/// lstm whose p is not a zero constant (the importer's value for an absent
/// P) is CPU-only.
bool cudnnRecurrentOperands(Operation *op, std::string *whyNot) {
  if (!isa<LstmOp, GruOp, RnnOp>(op))
    return true;
  std::string kind = op->getName().stripDialect().str();
  for (Value v : op->getOperands()) {
    Type t = getElementTypeOrSelf(v.getType());
    if (isa<FloatType>(t) && !t.isF32()) {
      if (whyNot)
        *whyNot = kind + " on CUDA is f32 only";
      return false;
    }
  }
  if (auto lstm = dyn_cast<LstmOp>(op)) {
    DenseElementsAttr p;
    if (!matchPattern(lstm.getP(), m_Constant(&p)) ||
        !llvm::all_of(p.getValues<APFloat>(),
                      [](const APFloat &v) { return v.isZero(); })) {
      if (whyNot)
        *whyNot = "lstm with peepholes is CPU-only (cuDNN's LSTM has none)";
      return false;
    }
  }
  return true;
}

bool hasKernel(Operation *op, Device d, std::string *whyNot) {
  if (d == Device::Gpu &&
      (!cudaHandlesTypes(op, whyNot) || !cudnnRecurrentOperands(op, whyNot)))
    return false;
  // With its operand count, as the lowering emits it (the recurrent ops'
  // predicate sees whether the optional sequence_lens is there).
  plan::Op planOp = toPlanOp(op);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    planOp.add_inputs(-1);
  return rt::hasKernel(planOp, d == Device::Cpu ? "cpu" : "cuda", whyNot);
}

/// Bytes of a value: static bytes, or bytes per sample (dynamic dims
/// counted as 1) when the shape is dynamic.
struct Bytes {
  int64_t fixed = 0;
  int64_t perSample = 0;
  void add(Value v, int64_t times = 1) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return;
    int64_t n = 1;
    for (int64_t d : type.getShape())
      n *= ShapedType::isDynamic(d) ? 1 : d;
    unsigned bits = type.getElementType().getIntOrFloatBitWidth();
    n *= std::max<unsigned>(1, (bits + 7) / 8);
    (type.hasStaticShape() ? fixed : perSample) += n * times;
  }
  std::string str() const {
    std::string s = std::to_string(fixed) + " bytes";
    if (perSample)
      s += " + " + std::to_string(perSample) + " bytes per sample";
    return s;
  }
};

struct TransferStats {
  int64_t interior = 0, boundary = 0;
  Bytes bytes;
  std::string str() const {
    return std::to_string(interior + boundary) + " (" +
           std::to_string(interior) + " interior, " + std::to_string(boundary) +
           " boundary; " + bytes.str() + ")";
  }
};

bool isHeavy(Operation *op) { return op->hasTrait<ComputeHeavy>(); }

struct Placer {
  func::FuncOp func;
  Device defaultDevice;
  bool allowSoft;
  int64_t hostOpMaxElements;

  llvm::MapVector<Operation *, Device> device;
  DenseMap<Operation *, std::string> why;
  DenseSet<Operation *> pinned;
  int64_t numGrouped = 0, numTransfers = 0;
  TransferStats naive, placed;

  /// Without the report, only decisions other than the requested device
  /// are remarked; the report remarks every op.
  bool report = false;
  void note(Operation *op) {
    if (!report)
      op->emitRemark() << "placed on " << deviceName(device[op]) << ": "
                       << why[op];
  }

  bool isPlaced(Operation *op) const {
    return isa_and_nonnull<GoptDialect>(op->getDialect()) &&
           !isa<ConstantOp, TransferOp>(op);
  }

  /// Where a value is produced; none for constants (materialized where
  /// used).
  std::optional<Device> producer(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def)
      return Device::Cpu; // arguments live on the host
    if (isa<ConstantOp>(def))
      return std::nullopt;
    if (auto t = dyn_cast<TransferOp>(def))
      return t.getTo() == "gpu" ? Device::Gpu : Device::Cpu;
    auto it = device.find(def);
    return it != device.end() ? it->second : Device::Cpu;
  }

  /// Where a use reads its operand.
  Device consumer(OpOperand &use) const {
    Operation *user = use.getOwner();
    if (auto t = dyn_cast<TransferOp>(user))
      return t.getFrom() == "gpu" ? Device::Gpu : Device::Cpu;
    auto it = device.find(user);
    return it != device.end() ? it->second : Device::Cpu; // return: host
  }

  /// Crossings of `v` when transfers are merged per destination: (count,
  /// bytes).
  std::pair<int64_t, int64_t> crossings(Value v) const {
    std::optional<Device> from = producer(v);
    if (!from)
      return {0, 0};
    bool toOther = false;
    for (OpOperand &use : v.getUses())
      toOther |= consumer(use) != *from;
    if (!toOther)
      return {0, 0};
    Bytes b;
    b.add(v);
    return {1, b.fixed + b.perSample};
  }

  LogicalResult placeByKernels() {
    for (Operation &op : func.getBody().front()) {
      if (!isPlaced(&op))
        continue;
      std::string whyNot;
      if (auto attr =
              op.getAttrOfType<StringAttr>(GoptDialect::getDeviceAttrName())) {
        Device d = attr.getValue() == "gpu" ? Device::Gpu : Device::Cpu;
        if (hasKernel(&op, d, &whyNot)) {
          device[&op] = d;
          pinned.insert(&op);
          why[&op] = "pinned by the graph";
          continue;
        }
        std::string otherWhy;
        if (!allowSoft || !hasKernel(&op, other(d), &otherWhy))
          return op.emitOpError("is pinned to ")
                 << deviceName(d) << ", which cannot run it: " << whyNot
                 << (allowSoft ? "; nor can " + deviceName(other(d)).str() +
                                     ": " + otherWhy
                               : std::string("; pass "
                                             "allow-soft-placement=true to "
                                             "move it"));
        device[&op] = other(d);
        why[&op] = ("pinned to " + deviceName(d) +
                    ", moved (soft placement): " + whyNot)
                       .str();
        note(&op);
        continue;
      }
      if (hasKernel(&op, defaultDevice, &whyNot)) {
        device[&op] = defaultDevice;
        why[&op] = "default device";
        continue;
      }
      std::string otherWhy;
      if (!hasKernel(&op, other(defaultDevice), &otherWhy))
        return op.emitOpError("has no kernel on any device: ")
               << whyNot << "; " << otherWhy;
      device[&op] = other(defaultDevice);
      why[&op] = whyNot;
      note(&op);
    }
    return success();
  }

  /// Small, not compute-bound: may run on the host to save copies.
  bool isCheap(Operation *op) const {
    if (isHeavy(op))
      return false;
    auto small = [&](Type t) {
      auto type = dyn_cast<RankedTensorType>(t);
      return type && type.hasStaticShape() &&
             type.getNumElements() <= hostOpMaxElements;
    };
    // `shape` reads only its operand's dims: its size is its result's.
    return (isa<ShapeOp>(op) || llvm::all_of(op->getOperandTypes(), small)) &&
           llvm::all_of(op->getResultTypes(), small);
  }

  /// Ops that compute nothing but move or reinterpret data: on the host they
  /// cost no more than the copy they replace, so they may move there when
  /// the crossings stay equal (a chain of shape ops then follows its host
  /// end).
  static bool isDataMovement(Operation *op) {
    return op->hasTrait<DataMovement>();
  }

  /// Moves cheap GPU ops next to host ops to the host while that lowers the
  /// crossings (count, then bytes) of the values they touch, or, for data
  /// movement ops, keeps them equal. Moves go one way, so this ends.
  void groupHostOps() {
    if (defaultDevice != Device::Gpu)
      return;
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto &[op, d] : device) {
        if (d != Device::Gpu || pinned.contains(op) || !isCheap(op) ||
            !hasKernel(op, Device::Cpu, nullptr))
          continue;
        llvm::SetVector<Value> touched;
        touched.insert(op->operand_begin(), op->operand_end());
        touched.insert(op->result_begin(), op->result_end());
        auto cost = [&] {
          std::pair<int64_t, int64_t> c{0, 0};
          for (Value v : touched) {
            auto [n, b] = crossings(v);
            c.first += n;
            c.second += b;
          }
          return c;
        };
        auto before = cost();
        if (before.first == 0)
          continue; // nothing crosses here: not next to the host
        d = Device::Cpu;
        auto after = cost();
        // Fewer crossings, or as many with fewer bytes; data movement ops
        // also on a tie in count (their few bytes either way).
        bool better = after.first < before.first ||
                      (after.first == before.first &&
                       (isDataMovement(op) || after.second < before.second));
        if (!better) {
          d = Device::Gpu;
          continue;
        }
        why[op] = "grouped with host ops (transfers around it " +
                  std::to_string(before.first) + " -> " +
                  std::to_string(after.first) + ")";
        ++numGrouped;
        changed = true;
      }
    }
  }

  /// Naive: every cross-device use copies (constants excepted: they are
  /// materialized where they are used).
  void countNaive() {
    auto count = [&](Value v) {
      std::optional<Device> from = producer(v);
      if (!from)
        return;
      for (OpOperand &use : v.getUses()) {
        if (consumer(use) == *from)
          continue;
        bool boundary =
            isa<BlockArgument>(v) || isa<func::ReturnOp>(use.getOwner());
        ++(boundary ? naive.boundary : naive.interior);
        naive.bytes.add(v);
      }
    };
    for (BlockArgument arg : func.getArguments())
      count(arg);
    for (auto &[op, d] : device)
      for (Value v : op->getResults())
        count(v);
  }

  void duplicateConstants() {
    SmallVector<ConstantOp> constants;
    func.walk([&](ConstantOp c) { constants.push_back(c); });
    for (ConstantOp c : constants) {
      SmallVector<OpOperand *> onGpu, onCpu;
      for (OpOperand &use : c->getUses())
        (consumer(use) == Device::Gpu ? onGpu : onCpu).push_back(&use);
      Device home = onCpu.empty() && !onGpu.empty() ? Device::Gpu : Device::Cpu;
      c->setAttr(GoptDialect::getDeviceAttrName(),
                 StringAttr::get(c.getContext(), deviceName(home)));
      if (onCpu.empty() || onGpu.empty())
        continue;
      OpBuilder builder(c);
      builder.setInsertionPointAfter(c);
      Operation *copy = builder.clone(*c);
      copy->setAttr(GoptDialect::getDeviceAttrName(),
                    StringAttr::get(c.getContext(), "gpu"));
      for (OpOperand *use : onGpu)
        use->set(copy->getResult(0));
    }
  }

  void insertTransfers() {
    auto transfer = [&](Value v, OpBuilder &builder) {
      std::optional<Device> from = producer(v);
      if (!from)
        return;
      // One transfer per destination; uses collected first.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : v.getUses())
        if (consumer(use) != *from)
          uses.push_back(&use);
      if (uses.empty())
        return;
      Device to = other(*from);
      auto t = builder.create<TransferOp>(v.getLoc(), v.getType(), v,
                                          deviceName(*from), deviceName(to));
      for (OpOperand *use : uses)
        use->set(t.getResult());
      // Boundary: from an argument, or to the host only to be returned.
      bool boundary =
          isa<BlockArgument>(v) ||
          (to == Device::Cpu && llvm::all_of(uses, [](OpOperand *use) {
             return isa<func::ReturnOp>(use->getOwner());
           }));
      ++(boundary ? placed.boundary : placed.interior);
      placed.bytes.add(v);
      ++numTransfers;
    };
    OpBuilder builder(func.getContext());
    builder.setInsertionPointToStart(&func.getBody().front());
    for (BlockArgument arg : func.getArguments())
      transfer(arg, builder);
    for (auto &[op, d] : device) {
      op->setAttr(GoptDialect::getDeviceAttrName(),
                  StringAttr::get(op->getContext(), deviceName(d)));
      builder.setInsertionPointAfter(op);
      for (Value v : op->getResults())
        transfer(v, builder);
    }
  }

  LogicalResult run() {
    if (!func.getBody().hasOneBlock())
      return func.emitOpError("placement expects a graph function with one "
                              "block");
    if (failed(placeByKernels()))
      return failure();
    countNaive();
    groupHostOps();
    for (auto &[op, d] : device)
      if (why[op].rfind("grouped", 0) == 0)
        note(op);
    duplicateConstants();
    insertTransfers();
    return success();
  }

  void emitReport() {
    int64_t onGpu = 0, onCpu = 0;
    for (auto &[op, d] : device) {
      ++(d == Device::Gpu ? onGpu : onCpu);
      op->emitRemark() << "placed on " << deviceName(d) << ": " << why[op];
    }
    func.emitRemark() << "gopt-placement-report: " << onGpu << " ops on gpu, "
                      << onCpu << " on cpu; transfers naive " << naive.str()
                      << ", placed " << placed.str();
  }
};

LogicalResult runPlacement(func::FuncOp func, TargetDevice defaultDevice,
                           bool allowSoft, int64_t maxElements, bool report,
                           int64_t &numTransfers, int64_t &numGrouped) {
  Placer placer;
  placer.func = func;
  placer.defaultDevice =
      defaultDevice == TargetDevice::Cpu ? Device::Cpu : Device::Gpu;
  placer.allowSoft = allowSoft;
  placer.hostOpMaxElements = maxElements;
  placer.report = report;
  if (failed(placer.run()))
    return failure();
  if (report)
    placer.emitReport();
  numTransfers += placer.numTransfers;
  numGrouped += placer.numGrouped;
  return success();
}

struct PlaceDevicesPass
    : public gopt::impl::PlaceDevicesBase<PlaceDevicesPass> {
  using PlaceDevicesBase::PlaceDevicesBase;
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }
  void runOnOperation() override {
    int64_t transfers = 0, grouped = 0;
    if (failed(runPlacement(getOperation(), defaultDevice, allowSoftPlacement,
                            hostOpMaxElements, report, transfers, grouped)))
      return signalPassFailure();
    numTransfers += transfers;
    numGrouped += grouped;
  }
};

struct PlacementReportPass
    : public gopt::impl::PlacementReportBase<PlacementReportPass> {
  using PlacementReportBase::PlacementReportBase;
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }
  void runOnOperation() override {
    int64_t transfers = 0, grouped = 0;
    if (failed(runPlacement(getOperation(), defaultDevice, allowSoftPlacement,
                            hostOpMaxElements, /*report=*/true, transfers,
                            grouped)))
      return signalPassFailure();
  }
};

} // namespace
