//===- Session.cpp - Execute a plan on a backend --------------------------===//
//
// What every backend shares: binding inputs, resolving shapes through the
// op table's shape functions, and memory limits. Executing the resolved
// plan is the backend's (Backend.h).
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Session.h"
#include "Backend.h"
#include "HostShapeValues.h"
#include "LoopOperands.h"
#include "PlanPieces.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

namespace gopt::runtime {

namespace {

// One more run of `row` that spent `ms` in it.
void noteRunTime(OpProfile &row, double ms) {
  row.minRunMs = row.runs ? std::min(row.minRunMs, ms) : ms;
  ++row.runs;
}

} // namespace

struct Session::Impl {
  Plan plan;
  SessionOptions options;
  const plan::Plan &p;

  std::vector<DType> dtypes;
  std::vector<Shape> shapes; // resolved
  // Per plan tensor (and any slot the backend adds): where its data lives.
  std::vector<void *> storage;

  // Per input binding: what the user set or bound (empty until then).
  std::vector<Tensor> boundInputs;
  std::vector<OpProfile> profiles; // per step of the backend
  // Each row's totalMs when the current run started.
  std::vector<double> runStartTotals;
  bool needsResolve = true;
  std::unique_ptr<Backend> backend;
  // Shape values computed in the graph (dynamic_reshape's target shape, the
  // operands of dynamic ops) or fed as inputs.
  HostShapeValues hostValues;
  // Per op: the sessions of its regions (control flow), else empty. They
  // share this session's options; the backend's kernels run them.
  std::vector<std::vector<std::unique_ptr<Session>>> regions;
  // When the plan has dynamic ops: the plan the backend runs, a copy whose
  // dynamic ops are their static ops (operands read on the host dropped),
  // with the attributes formed from the values of the last resolution.
  std::shared_ptr<plan::Plan> exec;
  // A region's session: its shapes resolve before its operands are computed.
  bool isRegion = false;

  // A plan with data-dependent result shapes runs in pieces (PlanPieces.h):
  // a session per piece of ordinary ops, and the data-dependent ops on the
  // host between them. Empty for every other plan.
  std::vector<PlanPiece> pieces;
  std::vector<std::unique_ptr<Session>> pieceSessions; // null for host ops
  // Per host op: its kernel and result buffers, made for the operand shapes
  // it last saw (kept while they repeat) at the shape function's bound.
  struct HostOpRun {
    std::vector<Shape> operandShapes;
    std::unique_ptr<Kernel> kernel;
    std::vector<Tensor> bounds;
    OpProfile profile;
  };
  std::vector<HostOpRun> hostRuns;
  // Per tensor of a pieced plan: its value in the last run (views into the
  // pieces' outputs and the host ops' buffers), or the copy of a constant.
  std::vector<Tensor> values;
  Status setUpPieces();
  Status runPieces();
  Status runHostOp(size_t piece);
  void collectPieceProfiles();

  Impl(Plan planIn, SessionOptions opts)
      : plan(std::move(planIn)), options(std::move(opts)), p(plan.proto()) {}

  std::string opLabel(int o) const {
    return "op '" + p.ops(o).name() + "' (" + p.ops(o).kind() + ")";
  }
  std::string tensorName(int t) const { return p.tensors(t).name(); }
  const plan::Op &execOp(int o) const { return exec ? exec->ops(o) : p.ops(o); }
  void makeExecPlan();
  Status formStaticOp(int o, const OpSchema &schema);
  int bindingOf(int tensor) const;

  Status init();
  // Everything init() does but resolving shapes: a region's session resolves
  // when its op does.
  Status setUp();
  Status createRegionSessions();
  // Result shapes of a control-flow op from its regions' sessions.
  Status resolveRegionOp(int o, const std::vector<Shape> &inShapes,
                         const std::vector<DType> &inTypes,
                         std::vector<Shape> &outShapes);
  // Resolves for inputs of these shapes; a tensor without data binds only
  // its shape (a region resolved before its operands are computed).
  Status resolveForInputs(const std::vector<Tensor> &inputs);
  // A 0-d integer or bool operand's value on the host while resolving: a
  // constant, a bound input, or a value the host computed.
  StatusOr<int64_t> hostScalar(int t) const;
  Status resolve();
  // Each profile row's flops at the resolved shapes.
  void countFlops();
  Status resolveShapes();
  Status checkTensorSize(int t, int producer) const;
  size_t memoryLimit() const { return memoryLimitBytes; }
  // options.memoryLimitBytes, or physical memory; set once by init().
  size_t memoryLimitBytes = SIZE_MAX;
  Status run();
  StatusOr<int> inputIndex(const std::string &name) const;
  Status checkInput(int binding, const Tensor &value) const;
};

void Session::Impl::makeExecPlan() {
  for (int o = 0; o < p.ops_size(); ++o) {
    const OpSchema *schema = findOpSchema(p.ops(o).kind());
    if (!schema->staticKind)
      continue;
    if (!exec)
      exec = std::make_shared<plan::Plan>(p);
    plan::Op &op = *exec->mutable_ops(o);
    op.set_kind(schema->staticKind);
    op.clear_inputs();
    for (int i = 0; i < p.ops(o).inputs_size(); ++i)
      if (std::find(schema->hostValueOperands.begin(),
                    schema->hostValueOperands.end(),
                    i) == schema->hostValueOperands.end())
        op.add_inputs(p.ops(o).inputs(i));
  }
}

int Session::Impl::bindingOf(int tensor) const {
  for (int b = 0; b < p.inputs_size(); ++b)
    if (p.inputs(b).tensor() == tensor)
      return b;
  return -1;
}

/// Dynamic op `o` as its static op in `exec`: its own attributes plus those
/// its value operands give (read on the host, turned into the static op's
/// meaning by the adapter), checked against the static op's schema.
Status Session::Impl::formStaticOp(int o, const OpSchema &schema) {
  const plan::Op &op = p.ops(o);
  shape::ValueAttrs values;
  for (size_t i = 0; i < schema.hostValueOperands.size(); ++i) {
    int operand = schema.hostValueOperands[i];
    if (operand >= op.inputs_size())
      return invalidArgument(opLabel(o), ": missing operand #", operand);
    int t = op.inputs(operand);
    if (p.tensors(t).kind() == plan::TensorInfo::CONSTANT &&
        !hostValues.realValue(t))
      GOPT_RETURN_IF_ERROR(hostValues.loadConstant(p, t, dtypes[t], shapes[t]));
    const std::vector<double> *reals = hostValues.realValue(t);
    if (!reals)
      return unimplemented(opLabel(o), ": the value of '", tensorName(t), "' (",
                           dtypeName(dtypes[t]),
                           ") is not read on the host (i64, i32 and f32 are)");
    shape::ValueAttr value;
    value.name = schema.hostValueAttrs[i];
    value.floats = *reals;
    if (const std::vector<int64_t> *ints = hostValues.intValue(t))
      value.ints = *ints;
    else
      value.isInteger = false;
    values.push_back(std::move(value));
  }
  if (schema.valueAttrAdapter) {
    std::vector<shape::Dims> operandShapes;
    for (int t : op.inputs())
      operandShapes.push_back(shapes[t]);
    shape::Result adapted = schema.valueAttrAdapter(operandShapes, values);
    if (adapted.failed())
      return invalidArgument(opLabel(o), ": ", adapted.message());
  }
  const OpSchema *staticSchema = findOpSchema(schema.staticKind);
  plan::Op &out = *exec->mutable_ops(o);
  *out.mutable_attrs() = op.attrs();
  for (const shape::ValueAttr &value : values) {
    auto spec =
        std::find_if(staticSchema->attrs.begin(), staticSchema->attrs.end(),
                     [&](const AttrSpec &a) { return value.name == a.name; });
    if (spec == staticSchema->attrs.end())
      return internalError(opLabel(o), ": '", schema.staticKind,
                           "' has no attribute '", value.name, "'");
    plan::AttrValue attr;
    size_t count = value.floats.size();
    bool scalar =
        spec->type == AttrType::kInt || spec->type == AttrType::kFloat;
    if (scalar && count != 1)
      return invalidArgument(opLabel(o), ": '", value.name,
                             "' must have one element, got ", count);
    if ((spec->type == AttrType::kInt || spec->type == AttrType::kInts) &&
        !value.isInteger)
      return invalidArgument(opLabel(o), ": '", value.name,
                             "' must be an integer tensor");
    switch (spec->type) {
    case AttrType::kInt:
      attr.set_i(value.ints[0]);
      break;
    case AttrType::kFloat:
      attr.set_f(value.floats[0]);
      break;
    case AttrType::kInts:
      attr.mutable_ints(); // an empty list is still a list
      for (int64_t v : value.ints)
        attr.mutable_ints()->add_values(v);
      break;
    case AttrType::kFloats:
      attr.mutable_floats();
      for (double v : value.floats)
        attr.mutable_floats()->add_values(v);
      break;
    default:
      return internalError(opLabel(o), ": attribute '", value.name, "' of '",
                           schema.staticKind, "' cannot come from a tensor");
    }
    (*out.mutable_attrs())[value.name] = attr;
  }
  return checkOpAgainstSchema(out, *staticSchema);
}

Status Session::Impl::init() {
  GOPT_RETURN_IF_ERROR(setUp());
  // A pieced plan resolves each piece when the run reaches it.
  if (!pieces.empty())
    return Status::success();
  // Shapes that depend on input values resolve once the inputs are set.
  if (!hostValues.valueInputs().empty()) {
    // Until then, inputs() describes the inputs as their plan declares them
    // (dynamic dimensions at the batch size).
    for (const plan::Binding &b : p.inputs()) {
      const auto &dims = p.tensors(b.tensor()).shape();
      Shape &shape = shapes[b.tensor()];
      shape.assign(dims.begin(), dims.end());
      for (int64_t &d : shape)
        if (d < 0)
          d = options.batchSize;
    }
    needsResolve = true;
    return Status::success();
  }
  Status resolved = resolve();
  // Dynamic dims other than the batch (an image model's H and W) take the
  // batch size only as a guess; a model that cannot run at that size (a
  // pooling window larger than a 1x1 input) resolves when its inputs are
  // set, and run() reports an error for the real shapes.
  bool guessedSpatialDims = false;
  for (const plan::Binding &b : p.inputs()) {
    const auto &dims = p.tensors(b.tensor()).shape();
    for (int d = 1; d < dims.size(); ++d)
      guessedSpatialDims |= dims[d] < 0;
  }
  if (!resolved.ok() && guessedSpatialDims) {
    needsResolve = true;
    return Status::success();
  }
  return resolved;
}

Status Session::Impl::createRegionSessions() {
  regions.resize(p.ops_size());
  backend->regionSessions.assign(p.ops_size(), {});
  for (int o = 0; o < p.ops_size(); ++o) {
    for (int r : p.ops(o).regions()) {
      GOPT_ASSIGN_OR_RETURN(
          Plan subplan,
          Plan::fromProto(p.subplans(r),
                          plan.origin() + ": " + opLabel(o) + " region"));
      auto impl = std::make_unique<Impl>(std::move(subplan), options);
      impl->isRegion = true;
      GOPT_RETURN_IF_ERROR(impl->setUp());
      regions[o].push_back(
          std::unique_ptr<Session>(new Session(std::move(impl))));
      backend->regionSessions[o].push_back(regions[o].back().get());
    }
  }
  return Status::success();
}

Status Session::Impl::setUp() {
  if (firstDataDependentOp(p) >= 0)
    return setUpPieces();
  GOPT_RETURN_IF_ERROR(hostValues.init(p));
  makeExecPlan();
  GOPT_ASSIGN_OR_RETURN(
      backend,
      createBackend(exec ? Plan::sharing(exec, plan.origin()) : plan, options));
  if (options.batchSize < 1)
    return invalidArgument("batch size must be >= 1, got ", options.batchSize);
  memoryLimitBytes = sessionMemoryLimit(options);
  if (p.constants().size() > memoryLimit())
    return resourceExhausted("the plan's ", p.constants().size(),
                             " bytes of constants exceed the memory limit of ",
                             memoryLimit(), " bytes");
  const int n = p.tensors_size();
  dtypes.resize(n);
  shapes.resize(n);
  for (int i = 0; i < n; ++i)
    dtypes[i] = fromProtoDType(p.tensors(i).dtype());
  boundInputs.resize(p.inputs_size());
  GOPT_RETURN_IF_ERROR(createRegionSessions());
  // An op's device is where a mixed host/device run would execute it
  // (placement, lib/Transforms/PlaceDevices.cpp). A session runs the whole
  // plan on its one backend: a CPU session runs "cuda" ops on the host and
  // its `transfer` ops are plain copies; a CUDA session runs "cpu" ops on the
  // device when it has a kernel for them (else its backend says "no CUDA
  // kernel ...; place it on the CPU"). Only unknown devices are rejected.
  for (int o = 0; o < p.ops_size(); ++o) {
    const std::string &device = p.ops(o).device();
    if (!device.empty() && device != "cpu" && device != "cuda")
      return invalidArgument(opLabel(o), " is placed on unknown device '",
                             device, "' (known: cpu, cuda)");
  }
  return Status::success();
}

Status Session::Impl::resolve() {
  GOPT_RETURN_IF_ERROR(resolveShapes());
  GOPT_RETURN_IF_ERROR(backend->prepare(dtypes, shapes, storage, profiles));
  countFlops();
  needsResolve = false;
  return Status::success();
}

void Session::Impl::countFlops() {
  // A row is an op, or a fused step whose name and kind join its ops'
  // names and kinds with '+'. Ops can share a name (a Gemm's matmul and
  // add, a gradient's ops all named after their forward op), so each part
  // of a row takes the flops of the next op of that name and kind, in plan
  // order: two ops of one name and kind count once each.
  std::map<std::pair<std::string, std::string>, std::deque<double>> queued;
  for (int o = 0; o < p.ops_size(); ++o) {
    const plan::Op &op = execOp(o);
    const OpSchema *schema = findOpSchema(op.kind());
    if (!schema || !schema->countFlops)
      continue;
    std::vector<Shape> in, out;
    for (int t : op.inputs())
      in.push_back(t >= 0 ? shapes[t] : Shape());
    for (int t : op.outputs())
      out.push_back(shapes[t]);
    queued[{op.name(), op.kind()}].push_back(
        schema->countFlops(OpAttrs(op), in, out));
  }
  auto split = [](const std::string &joined) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= joined.size();) {
      size_t end = std::min(joined.find('+', start), joined.size());
      parts.push_back(joined.substr(start, end - start));
      start = end + 1;
    }
    return parts;
  };
  for (OpProfile &row : profiles) {
    row.flops = 0;
    std::vector<std::string> names = split(row.name), kinds = split(row.kind);
    if (names.size() != kinds.size())
      continue; // a name with '+' of its own: its ops are not known
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = queued.find({names[i], kinds[i]});
      if (it == queued.end() || it->second.empty())
        continue;
      row.flops += it->second.front();
      it->second.pop_front();
    }
  }
}

/// A resolved tensor must have a size that fits in memory: shapes come from
/// plan files and bound inputs, and a huge pad must be an error, not a 4 GiB
/// allocation or an overflowed element count.
Status Session::Impl::checkTensorSize(int t, int producer) const {
  std::string where =
      producer >= 0 ? opLabel(producer) + ": result '" + tensorName(t) + "'"
                    : "tensor '" + tensorName(t) + "'";
  std::optional<int64_t> bytes = checkedByteSize(shapes[t], dtypes[t]);
  if (!bytes)
    return invalidArgument(where, " has shape ", shapeToString(shapes[t]),
                           ", whose size does not fit in 64 bits");
  if (static_cast<uint64_t>(*bytes) > memoryLimit())
    return resourceExhausted(
        where, " of shape ", shapeToString(shapes[t]), " needs ", *bytes,
        " bytes, more than the memory limit of ", memoryLimit(), " bytes");
  return Status::success();
}

Status Session::Impl::resolveShapes() {
  const int n = p.tensors_size();
  for (int i = 0; i < n; ++i) {
    const auto &dims = p.tensors(i).shape();
    shapes[i].assign(dims.begin(), dims.end());
    // Dynamic dims of inputs (and state without a value) take the batch size
    // unless a bound tensor says otherwise (below).
    auto kind = p.tensors(i).kind();
    if (kind == plan::TensorInfo::INPUT || kind == plan::TensorInfo::STATE)
      for (int64_t &d : shapes[i])
        if (d < 0)
          d = options.batchSize;
  }
  for (int b = 0; b < p.inputs_size(); ++b)
    if (!boundInputs[b].empty())
      shapes[p.inputs(b).tensor()] = boundInputs[b].shape();
  for (int i = 0; i < n; ++i) {
    auto kind = p.tensors(i).kind();
    if (kind == plan::TensorInfo::INPUT || kind == plan::TensorInfo::STATE)
      GOPT_RETURN_IF_ERROR(checkTensorSize(i, -1));
  }

  for (int t : hostValues.valueInputs()) {
    const Tensor &value = boundInputs[bindingOf(t)];
    if (value.empty())
      return failedPrecondition("input '", tensorName(t),
                                "' decides result shapes: set or bind it "
                                "before run()");
    if (value.byteSize() && !value.data())
      return unimplemented("the value of '", tensorName(t),
                           "' decides result shapes inside a region, but it "
                           "is only known while the enclosing plan runs");
    GOPT_RETURN_IF_ERROR(hostValues.setInputValue(p, t, value));
  }

  for (int o = 0; o < p.ops_size(); ++o) {
    const OpSchema *schema = findOpSchema(p.ops(o).kind());
    if (schema->staticKind) {
      GOPT_RETURN_IF_ERROR(formStaticOp(o, *schema));
      schema = findOpSchema(schema->staticKind);
    }
    const plan::Op &op = execOp(o);
    std::vector<Shape> inShapes;
    std::vector<DType> inTypes;
    for (int t : op.inputs()) {
      inShapes.push_back(shapes[t]);
      inTypes.push_back(dtypes[t]);
    }
    std::vector<Shape> outShapes(op.outputs_size());
    Status inferred;
    if (schema->numRegions > 0) {
      inferred = resolveRegionOp(o, inShapes, inTypes, outShapes);
    } else if (schema->inferShapesFromValues) {
      std::vector<const std::vector<int64_t> *> values;
      for (int t : op.inputs())
        values.push_back(hostValues.intValue(t));
      inferred = schema->inferShapesFromValues(OpAttrs(op), inShapes, inTypes,
                                               values, outShapes);
    } else if (!schema->inferShapes) {
      // Shapes only the operands' data decide (inferShapesFromData): the
      // op runs between the plan's pieces, never in a resolved plan.
      return unimplemented(opLabel(o), ": its result shapes are known only "
                                       "from its operands' data");
    } else {
      inferred = schema->inferShapes(OpAttrs(op), inShapes, inTypes, outShapes);
    }
    if (!inferred.ok())
      return Status(inferred.code(), opLabel(o) + ": " + inferred.message());
    for (int r = 0; r < op.outputs_size(); ++r) {
      int t = op.outputs(r);
      ResultDType resultDType = schema->resultDTypeOf(r);
      DType expected = expectedResultDType(resultDType, inTypes);
      if (resultDType != ResultDType::kAny && dtypes[t] != expected)
        return invalidArgument(opLabel(o), ": result '", tensorName(t),
                               "' has element type ", dtypeName(dtypes[t]),
                               ", the op produces ", dtypeName(expected));
      const auto &planDims = p.tensors(t).shape();
      bool match = planDims.size() == static_cast<int>(outShapes[r].size());
      for (int d = 0; match && d < planDims.size(); ++d)
        match = planDims[d] < 0 || planDims[d] == outShapes[r][d];
      if (!match)
        return invalidArgument(
            opLabel(o), ": result '", tensorName(t), "' has shape ",
            shapeToString(outShapes[r]), " but the plan declares ",
            shapeToString(Shape(planDims.begin(), planDims.end())));
      shapes[t] = outShapes[r];
      GOPT_RETURN_IF_ERROR(checkTensorSize(t, o));
    }
    if (hostValues.computesOp(o))
      if (Status s = hostValues.compute(p, op, o, dtypes, shapes); !s.ok())
        return Status(s.code(), opLabel(o) + ": " + s.message());
  }
  return Status::success();
}

StatusOr<int64_t> Session::Impl::hostScalar(int t) const {
  const plan::TensorInfo &info = p.tensors(t);
  DType dtype = dtypes[t];
  if (numElements(shapes[t]) != 1 ||
      (dtype != DType::kI64 && dtype != DType::kI32 && dtype != DType::kBool))
    return invalidArgument("'", info.name(),
                           "' must be a single integer or "
                           "bool, got ",
                           dtypeName(dtype), shapeToString(shapes[t]));
  const void *data = nullptr;
  if (info.kind() == plan::TensorInfo::CONSTANT)
    data = p.constants().data() + info.constant_offset();
  for (int b = 0; b < p.inputs_size(); ++b)
    if (p.inputs(b).tensor() == t && !boundInputs[b].empty())
      data = boundInputs[b].data();
  if (const Tensor *value = hostValues.value(t))
    data = value->data();
  if (!data)
    return unimplemented("the value of '", info.name(),
                         "' is needed to size the results, but it is only "
                         "known while running");
  switch (dtype) {
  case DType::kI64: {
    int64_t v;
    std::memcpy(&v, data, sizeof v);
    return v;
  }
  case DType::kI32: {
    int32_t v;
    std::memcpy(&v, data, sizeof v);
    return v;
  }
  default:
    return *static_cast<const uint8_t *>(data) ? 1 : 0;
  }
}

Status Session::Impl::resolveForInputs(const std::vector<Tensor> &inputs) {
  if (inputs.size() != boundInputs.size())
    return invalidArgument("the region takes ", boundInputs.size(),
                           " values, the op gives it ", inputs.size());
  for (size_t b = 0; b < inputs.size(); ++b) {
    int t = p.inputs(b).tensor();
    if (inputs[b].dtype() != dtypes[t])
      return invalidArgument("region input '", p.inputs(b).name(),
                             "' has element type ", dtypeName(dtypes[t]),
                             ", the op gives it ",
                             dtypeName(inputs[b].dtype()));
    boundInputs[b] = inputs[b];
  }
  return resolve();
}

Status Session::Impl::resolveRegionOp(int o, const std::vector<Shape> &inShapes,
                                      const std::vector<DType> &inTypes,
                                      std::vector<Shape> &outShapes) {
  const plan::Op &op = p.ops(o);
  auto shapeOnly = [&](size_t i) {
    return Tensor::view(inTypes[i], inShapes[i], nullptr);
  };
  auto regionOutput = [](Session &region, int i) -> std::pair<DType, Shape> {
    int t = region.impl_->p.outputs(i).tensor();
    return {region.impl_->dtypes[t], region.impl_->shapes[t]};
  };
  auto checkResultType = [&](int r, DType dtype) -> Status {
    if (dtypes[op.outputs(r)] != dtype)
      return invalidArgument("result #", r, " is ",
                             dtypeName(dtypes[op.outputs(r)]),
                             " but its region gives ", dtypeName(dtype));
    return Status::success();
  };
  std::vector<std::unique_ptr<Session>> &sessions = regions[o];
  if (op.kind() == "if") {
    std::vector<Tensor> captures;
    for (size_t i = 1; i < inShapes.size(); ++i)
      captures.push_back(shapeOnly(i));
    std::vector<std::vector<Shape>> perBranch;
    for (auto &branch : sessions) {
      if (branch->impl_->p.outputs_size() != op.outputs_size())
        return invalidArgument("a branch gives ",
                               branch->impl_->p.outputs_size(), " values for ",
                               op.outputs_size(), " results");
      if (Status s = branch->impl_->resolveForInputs(captures); !s.ok())
        return Status(s.code(),
                      std::string(perBranch.empty() ? "then" : "else") +
                          " branch: " + s.message());
      perBranch.emplace_back();
      for (int r = 0; r < op.outputs_size(); ++r) {
        auto [dtype, shape] = regionOutput(*branch, r);
        GOPT_RETURN_IF_ERROR(checkResultType(r, dtype));
        perBranch.back().push_back(shape);
      }
    }
    for (int r = 0; r < op.outputs_size(); ++r)
      if (perBranch[0][r] != perBranch[1][r])
        return invalidArgument(
            "result #", r, " has shape ", shapeToString(perBranch[0][r]),
            " in the then branch and ", shapeToString(perBranch[1][r]),
            " in the else branch; both must agree, as memory is planned "
            "before the condition is known");
    outShapes = perBranch[0];
    return Status::success();
  }
  // loop: operands (max_trip_count, cond, carried..., captures...); the
  // body takes (iteration, cond, carried..., captures...) and yields (cond,
  // carried..., scan slices...).
  int64_t numCarried = loopCarriedCount(op);
  int numScans = op.outputs_size() - static_cast<int>(numCarried);
  Session &body = *sessions[0];
  if (numCarried < 0 || numCarried + 2 > op.inputs_size() || numScans < 0 ||
      body.impl_->p.inputs_size() != op.inputs_size() ||
      body.impl_->p.outputs_size() != 1 + op.outputs_size())
    return invalidArgument("the operand segments (", numCarried,
                           " carried values; -1 when malformed) do not fit ",
                           op.inputs_size(), " operands, ", op.outputs_size(),
                           " results and a body of ",
                           body.impl_->p.inputs_size(), " inputs and ",
                           body.impl_->p.outputs_size(), " outputs");
  // Resolving runs no op, but shapes computed in the body may read the
  // iteration number: the first iteration's, 0 (then checked per run).
  Tensor iteration = Tensor::allocate(DType::kI64, {});
  *iteration.data<int64_t>() = 0;
  Tensor cond = Tensor::allocate(DType::kBool, {});
  *cond.data<bool>() = true;
  std::vector<Tensor> bodyInputs = {iteration, cond};
  for (int i = 2; i < op.inputs_size(); ++i)
    bodyInputs.push_back(shapeOnly(i));
  if (Status s = body.impl_->resolveForInputs(bodyInputs); !s.ok())
    return Status(s.code(), "body: " + s.message());
  outShapes.clear();
  for (int i = 0; i < numCarried; ++i) {
    auto [dtype, shape] = regionOutput(body, 1 + i);
    GOPT_RETURN_IF_ERROR(checkResultType(i, dtype));
    if (shape != inShapes[2 + i])
      return invalidArgument("the body turns carried value #", i, " of shape ",
                             shapeToString(inShapes[2 + i]), " into ",
                             shapeToString(shape),
                             "; carried values keep their shapes");
    outShapes.push_back(shape);
  }
  if (numScans == 0)
    return Status::success();
  if (!op_attrs::LoopAttrs(op).condInvariant())
    return invalidArgument("scan outputs need cond_invariant: their leading "
                           "dimension is the number of iterations");
  GOPT_ASSIGN_OR_RETURN(int64_t maxTrips, hostScalar(op.inputs(0)));
  GOPT_ASSIGN_OR_RETURN(int64_t enter, hostScalar(op.inputs(1)));
  if (maxTrips < 0)
    return invalidArgument("max_trip_count is negative (", maxTrips, ")");
  int64_t iterations = enter ? maxTrips : 0;
  for (int j = 0; j < numScans; ++j) {
    auto [dtype, slice] = regionOutput(body, 1 + numCarried + j);
    GOPT_RETURN_IF_ERROR(checkResultType(numCarried + j, dtype));
    Shape stacked = {iterations};
    stacked.insert(stacked.end(), slice.begin(), slice.end());
    outShapes.push_back(stacked);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Plans with data-dependent result shapes (PlanPieces.h)
//===----------------------------------------------------------------------===//

Status Session::Impl::setUpPieces() {
  int first = firstDataDependentOp(p);
  if (isRegion)
    return unimplemented(opLabel(first),
                         ": data-dependent result shapes inside a control-flow "
                         "region are not supported (its shapes resolve before "
                         "the region runs)");
  if (options.batchSize < 1)
    return invalidArgument("batch size must be >= 1, got ", options.batchSize);
  memoryLimitBytes = sessionMemoryLimit(options);
  GOPT_ASSIGN_OR_RETURN(pieces, splitAtDataDependentOps(p));
  const int n = p.tensors_size();
  dtypes.resize(n);
  shapes.resize(n);
  storage.assign(n, nullptr);
  values.assign(n, Tensor());
  for (int i = 0; i < n; ++i) {
    dtypes[i] = fromProtoDType(p.tensors(i).dtype());
    const auto &dims = p.tensors(i).shape();
    shapes[i].assign(dims.begin(), dims.end());
    if (p.tensors(i).kind() == plan::TensorInfo::INPUT)
      for (int64_t &d : shapes[i])
        if (d < 0)
          d = options.batchSize;
  }
  boundInputs.resize(p.inputs_size());
  pieceSessions.resize(pieces.size());
  hostRuns.resize(pieces.size());
  // Host kernels read constants from aligned copies; outputs may be bound
  // straight to constants.
  auto copyConstant = [&](int t) {
    if (p.tensors(t).kind() != plan::TensorInfo::CONSTANT || !values[t].empty())
      return;
    values[t] = Tensor::allocate(dtypes[t], shapes[t]);
    if (values[t].byteSize())
      std::memcpy(values[t].data(),
                  p.constants().data() + p.tensors(t).constant_offset(),
                  values[t].byteSize());
  };
  for (const plan::Binding &b : p.outputs())
    copyConstant(b.tensor());
  for (size_t k = 0; k < pieces.size(); ++k) {
    PlanPiece &piece = pieces[k];
    if (piece.hostOp >= 0) {
      const plan::Op &op = p.ops(piece.hostOp);
      GOPT_RETURN_IF_ERROR(checkOpAgainstSchema(op, *findOpSchema(op.kind())));
      for (int t : op.inputs())
        copyConstant(t);
      HostOpRun &run = hostRuns[k];
      run.profile.name = op.name();
      run.profile.kind = op.kind();
      run.profile.device = "cpu";
      run.profile.implementation = "reference";
      continue;
    }
    GOPT_ASSIGN_OR_RETURN(
        Plan piecePlan,
        Plan::fromProto(std::move(piece.plan),
                        plan.origin() + " (piece " + std::to_string(k) + ")"));
    piece.plan = plan::Plan(); // the piece's session keeps its own copy
    auto impl = std::make_unique<Impl>(std::move(piecePlan), options);
    GOPT_RETURN_IF_ERROR(impl->setUp());
    pieceSessions[k] = std::unique_ptr<Session>(new Session(std::move(impl)));
  }
  collectPieceProfiles();
  return Status::success();
}

Status Session::Impl::runHostOp(size_t k) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  const int o = pieces[k].hostOp;
  const plan::Op &op = p.ops(o);
  const OpSchema &schema = *findOpSchema(op.kind());
  HostOpRun &run = hostRuns[k];
  std::vector<Shape> inShapes;
  std::vector<DType> inTypes;
  std::vector<Tensor> inputs;
  for (int t : op.inputs()) {
    if (values[t].empty())
      return internalError(opLabel(o), ": operand '", tensorName(t),
                           "' has no value");
    inShapes.push_back(values[t].shape());
    inTypes.push_back(dtypes[t]);
    inputs.push_back(values[t]);
  }
  // A kernel and buffers at the bound, made again only for new operand
  // shapes: repeated runs allocate nothing. An op whose shapes only the
  // operands' data decide (inferShapesFromData) gets its exact shapes from
  // them on every run, and new buffers when those change.
  std::vector<Shape> bounds(op.outputs_size());
  bool rebuild = !run.kernel || inShapes != run.operandShapes;
  if (schema.inferShapesFromData) {
    if (Status s = schema.inferShapesFromData(OpAttrs(op), inputs, bounds);
        !s.ok())
      return Status(s.code(), opLabel(o) + ": " + s.message());
    for (size_t r = 0; r < run.bounds.size() && !rebuild; ++r)
      rebuild = run.bounds[r].shape() != bounds[r];
  } else if (rebuild) {
    if (Status s = schema.inferShapes(OpAttrs(op), inShapes, inTypes, bounds);
        !s.ok())
      return Status(s.code(), opLabel(o) + ": " + s.message());
  }
  if (rebuild) {
    KernelConfig config;
    config.op = &op;
    config.opIndex = o;
    config.seed = options.seed;
    config.threads = 1;
    config.inputTypes = inTypes;
    config.inputShapes = inShapes;
    for (int t : op.inputs())
      config.constantInputs.push_back(
          p.tensors(t).kind() == plan::TensorInfo::CONSTANT ? values[t].data()
                                                            : nullptr);
    run.kernel.reset();
    run.bounds.clear();
    for (int r = 0; r < op.outputs_size(); ++r) {
      int t = op.outputs(r);
      ResultDType resultDType = schema.resultDTypeOf(r);
      DType expected = expectedResultDType(resultDType, inTypes);
      if (resultDType != ResultDType::kAny && dtypes[t] != expected)
        return invalidArgument(opLabel(o), ": result '", tensorName(t),
                               "' has element type ", dtypeName(dtypes[t]),
                               ", the op produces ", dtypeName(expected));
      shapes[t] = bounds[r];
      GOPT_RETURN_IF_ERROR(checkTensorSize(t, o));
      config.outputTypes.push_back(dtypes[t]);
      config.outputShapes.push_back(bounds[r]);
      run.bounds.push_back(Tensor::allocate(dtypes[t], bounds[r]));
      if (!run.bounds.back().data() && run.bounds.back().byteSize())
        return resourceExhausted(opLabel(o), ": cannot allocate ",
                                 run.bounds.back().byteSize(), " bytes");
    }
    GOPT_ASSIGN_OR_RETURN(run.kernel,
                          KernelRegistry::global().create("cpu", config));
    run.operandShapes = inShapes;
  }
  std::vector<Tensor> outputs = run.bounds;
  if (Status s = run.kernel->run(inputs, outputs); !s.ok())
    return Status(s.code(), opLabel(o) + ": " + s.message());
  const std::vector<Shape> *actual = run.kernel->actualResultShapes();
  if (!actual || actual->size() != outputs.size())
    return internalError(opLabel(o),
                         ": the kernel did not report its result shapes");
  for (int r = 0; r < op.outputs_size(); ++r) {
    int t = op.outputs(r);
    const Shape &shape = (*actual)[r];
    const auto &planDims = p.tensors(t).shape();
    bool match = shape.size() == run.bounds[r].shape().size() &&
                 numElements(shape) <= run.bounds[r].numElements() &&
                 planDims.size() == static_cast<int>(shape.size());
    for (int d = 0; match && d < planDims.size(); ++d)
      match = planDims[d] < 0 || planDims[d] == shape[d];
    if (!match)
      return invalidArgument(
          opLabel(o), ": result '", tensorName(t), "' has shape ",
          shapeToString(shape), "; the plan declares ",
          shapeToString(Shape(planDims.begin(), planDims.end())),
          " and the bound is ", shapeToString(run.bounds[r].shape()));
    values[t] = Tensor::view(dtypes[t], shape, run.bounds[r].data());
  }
  double ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  run.profile.calls++;
  run.profile.lastMs = ms;
  run.profile.totalMs += ms;
  noteRunTime(run.profile, ms);
  return Status::success();
}

Status Session::Impl::runPieces() {
  for (int b = 0; b < p.inputs_size(); ++b) {
    if (boundInputs[b].empty())
      return failedPrecondition("missing input '", p.inputs(b).name(),
                                "': set or bind it before run()");
    values[p.inputs(b).tensor()] = boundInputs[b];
  }
  for (size_t k = 0; k < pieces.size(); ++k) {
    const PlanPiece &piece = pieces[k];
    if (piece.hostOp >= 0) {
      GOPT_RETURN_IF_ERROR(runHostOp(k));
      continue;
    }
    Session &session = *pieceSessions[k];
    const plan::Plan &pp = session.impl_->p;
    for (size_t i = 0; i < piece.inputs.size(); ++i) {
      const Tensor &value = values[piece.inputs[i]];
      if (value.empty())
        return internalError("tensor '", tensorName(piece.inputs[i]),
                             "' has no value before piece ", k);
      GOPT_RETURN_IF_ERROR(session.bindInput(pp.inputs(i).name(), value));
    }
    GOPT_RETURN_IF_ERROR(session.run());
    for (size_t j = 0; j < piece.outputs.size(); ++j) {
      GOPT_ASSIGN_OR_RETURN(values[piece.outputs[j]],
                            session.output(pp.outputs(j).name()));
    }
  }
  for (int t = 0; t < p.tensors_size(); ++t)
    if (!values[t].empty()) {
      shapes[t] = values[t].shape();
      storage[t] = values[t].data();
    }
  collectPieceProfiles();
  return Status::success();
}

void Session::Impl::collectPieceProfiles() {
  profiles.clear();
  double startMs = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    std::vector<OpProfile> rows;
    if (pieceSessions[k])
      rows = pieceSessions[k]->opProfiles();
    else
      rows = {hostRuns[k].profile};
    double pieceStart = startMs;
    for (OpProfile &row : rows) {
      row.lastStartMs += pieceStart;
      startMs = std::max(startMs, row.lastStartMs + row.lastMs);
      profiles.push_back(row);
    }
  }
}

Status Session::Impl::run() {
  if (!pieces.empty())
    return runPieces();
  if (storage.size() < shapes.size())
    storage.resize(shapes.size(), nullptr);
  for (int b = 0; b < p.inputs_size(); ++b) {
    if (boundInputs[b].empty())
      return failedPrecondition("missing input '", p.inputs(b).name(),
                                "': set or bind it before run()");
    storage[p.inputs(b).tensor()] = boundInputs[b].data();
  }
  // Inputs whose values decide shapes: a new value re-resolves them.
  for (int t : hostValues.valueInputs())
    if (hostValues.inputValueChanged(t, boundInputs[bindingOf(t)]))
      needsResolve = true;
  if (needsResolve)
    GOPT_RETURN_IF_ERROR(resolve());
  runStartTotals.resize(profiles.size());
  for (size_t i = 0; i < profiles.size(); ++i)
    runStartTotals[i] = profiles[i].totalMs;
  GOPT_RETURN_IF_ERROR(backend->run(storage, profiles));
  for (size_t i = 0; i < profiles.size() && i < runStartTotals.size(); ++i)
    noteRunTime(profiles[i], profiles[i].totalMs - runStartTotals[i]);
  return Status::success();
}

StatusOr<int> Session::Impl::inputIndex(const std::string &name) const {
  for (int b = 0; b < p.inputs_size(); ++b)
    if (p.inputs(b).name() == name)
      return b;
  std::string known;
  for (const plan::Binding &b : p.inputs())
    known += (known.empty() ? "" : ", ") + b.name();
  return notFound("no input named '", name, "' (inputs: ", known, ")");
}

Status Session::Impl::checkInput(int b, const Tensor &value) const {
  int t = p.inputs(b).tensor();
  const std::string &name = p.inputs(b).name();
  if (value.dtype() != dtypes[t])
    return invalidArgument("input '", name, "' has element type ",
                           dtypeName(dtypes[t]), ", got ",
                           dtypeName(value.dtype()));
  const auto &dims = p.tensors(t).shape();
  bool match = static_cast<int64_t>(dims.size()) == value.rank();
  for (int d = 0; match && d < dims.size(); ++d)
    match = dims[d] < 0 || dims[d] == value.dim(d);
  if (!match)
    return invalidArgument("input '", name, "' expects shape ",
                           shapeToString(Shape(dims.begin(), dims.end())),
                           ", got ", shapeToString(value.shape()));
  if (value.numElements() && !value.data())
    return invalidArgument("input '", name, "' has no data");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

StatusOr<std::unique_ptr<Session>>
Session::create(const Plan &plan, const SessionOptions &options) {
  auto impl = std::make_unique<Impl>(plan, options);
  GOPT_RETURN_IF_ERROR(impl->init());
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const SessionOptions &Session::options() const { return impl_->options; }
const Plan &Session::plan() const { return impl_->plan; }

std::vector<TensorDesc> Session::inputs() const {
  std::vector<TensorDesc> result;
  for (const plan::Binding &b : impl_->p.inputs())
    result.push_back(
        {b.name(), impl_->dtypes[b.tensor()], impl_->shapes[b.tensor()]});
  return result;
}

std::vector<TensorDesc> Session::outputs() const {
  std::vector<TensorDesc> result;
  for (const plan::Binding &b : impl_->p.outputs())
    result.push_back(
        {b.name(), impl_->dtypes[b.tensor()], impl_->shapes[b.tensor()]});
  return result;
}

Status Session::setInput(const std::string &name, const Tensor &value) {
  GOPT_ASSIGN_OR_RETURN(int b, impl_->inputIndex(name));
  GOPT_RETURN_IF_ERROR(impl_->checkInput(b, value));
  Tensor &slot = impl_->boundInputs[b];
  if (slot.empty() || !slot.isOwning() || slot.shape() != value.shape())
    slot = Tensor::allocate(value.dtype(), value.shape());
  if (!slot.data())
    return resourceExhausted("cannot allocate ", value.byteSize(),
                             " bytes for input '", name, "'");
  if (value.byteSize())
    std::memcpy(slot.data(), value.data(), value.byteSize());
  if (impl_->backend)
    impl_->backend->inputsChanged = true;
  if (value.shape() != impl_->shapes[impl_->p.inputs(b).tensor()])
    impl_->needsResolve = true;
  return Status::success();
}

Status Session::bindInput(const std::string &name, const Tensor &value) {
  GOPT_ASSIGN_OR_RETURN(int b, impl_->inputIndex(name));
  GOPT_RETURN_IF_ERROR(impl_->checkInput(b, value));
  impl_->boundInputs[b] = Tensor::view(value.dtype(), value.shape(),
                                       const_cast<void *>(value.data()));
  if (impl_->backend)
    impl_->backend->inputsChanged = true;
  if (value.shape() != impl_->shapes[impl_->p.inputs(b).tensor()])
    impl_->needsResolve = true;
  return Status::success();
}

Status Session::run() { return impl_->run(); }

StatusOr<Tensor> Session::output(const std::string &name) const {
  int t = impl_->plan.outputTensor(name);
  if (t < 0)
    return notFound("no output named '", name, "'");
  if (!impl_->storage[t])
    return failedPrecondition("output '", name, "' is not computed yet");
  return Tensor::view(impl_->dtypes[t], impl_->shapes[t], impl_->storage[t]);
}

static int stateTensor(const plan::Plan &p, const std::string &name) {
  for (const plan::StateBinding &b : p.states())
    if (b.name() == name)
      return b.tensor();
  return -1;
}

StatusOr<Tensor> Session::state(const std::string &name) const {
  int t = stateTensor(impl_->p, name);
  if (t < 0)
    return notFound("no state named '", name, "'");
  return Tensor::view(impl_->dtypes[t], impl_->shapes[t], impl_->storage[t]);
}

Status Session::setState(const std::string &name, const Tensor &value) {
  int t = stateTensor(impl_->p, name);
  if (t < 0)
    return notFound("no state named '", name, "'");
  if (value.dtype() != impl_->dtypes[t] || value.shape() != impl_->shapes[t])
    return invalidArgument(
        "state '", name, "' is ", dtypeName(impl_->dtypes[t]),
        shapeToString(impl_->shapes[t]), ", got ", dtypeName(value.dtype()),
        shapeToString(value.shape()));
  std::memcpy(impl_->storage[t], value.data(), value.byteSize());
  return Status::success();
}

const std::vector<OpProfile> &Session::opProfiles() const {
  return impl_->profiles;
}

void Session::resetProfiles() {
  for (OpProfile &p : impl_->profiles) {
    p.calls = p.runs = 0;
    p.totalMs = p.lastMs = p.lastStartMs = p.minRunMs = 0;
  }
  if (impl_->pieces.empty())
    return;
  for (auto &session : impl_->pieceSessions)
    if (session)
      session->resetProfiles();
  for (Impl::HostOpRun &run : impl_->hostRuns) {
    run.profile.calls = run.profile.runs = 0;
    run.profile.totalMs = run.profile.lastMs = run.profile.lastStartMs =
        run.profile.minRunMs = 0;
  }
  impl_->collectPieceProfiles();
}

MemoryStats Session::memoryStats() const {
  if (impl_->pieces.empty())
    return impl_->backend->memoryStats(impl_->boundInputs);
  // A pieced plan: its pieces' memory (their inputs are views of earlier
  // pieces' outputs), the host ops' buffers and the plan's own input copies.
  MemoryStats m;
  for (const auto &session : impl_->pieceSessions) {
    if (!session)
      continue;
    MemoryStats s = session->memoryStats();
    m.arenaBytes += s.arenaBytes;
    m.intermediateBytes += s.intermediateBytes;
    m.constantBytes += s.constantBytes;
    m.outputBytes += s.outputBytes;
    m.workspaceBytes += s.workspaceBytes;
  }
  for (const Impl::HostOpRun &run : impl_->hostRuns)
    for (const Tensor &t : run.bounds)
      m.workspaceBytes += t.byteSize();
  for (const Tensor &t : impl_->boundInputs)
    if (t.isOwning())
      m.inputBytes += t.byteSize();
  return m;
}

const Shape &Session::tensorShape(int tensor) const {
  return impl_->shapes[tensor];
}

} // namespace gopt::runtime
