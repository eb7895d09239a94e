//===- PlanLoadFuzzer.cpp - Fuzz target: runtime plan loading -------------===//
//
// Bytes as a serialized plan (.gplan): Plan::loadFromBytes (parse and
// validate), then a reference-backend session at batch 1, every input bound
// to zeros, one run, every output read. Any error status is fine; a crash, a
// hang or a sanitizer report is a finding.
//
// Plans whose declared tensors (dynamic dims at batch 1) and constants need
// more than kMaxTensorBytes are skipped, and the session runs under the same
// memory limit (SessionOptions::memoryLimitBytes), so an intermediate whose
// inferred shape blows up (a huge pad) must come back as an error; anything
// that still allocates more is caught by the driver's allocation limit
// (libFuzzer's -malloc_limit_mb, gopt-fuzz-smoke's guard). Plans with a
// loop that may run more than kMaxLoopTrips times are skipped too.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Session.h"
#include "gopt/runtime/Tensor.h"

#include <cstring>
#include <string>

using namespace gopt::runtime;

namespace {

/// Bytes of `dims` (dynamic dims as 1) of `dtype`, added to `total`; false
/// when the sum would pass kMaxTensorBytes (or overflow on the way).
bool addTensorBytes(const Shape &dims, DType dtype, size_t &total) {
  size_t bytes = dtypeSize(dtype);
  if (bytes == 0)
    bytes = 8;
  for (int64_t d : dims) {
    size_t extent = d < 0 ? 1 : static_cast<size_t>(d);
    if (extent != 0 && bytes > gopt::fuzz::kMaxTensorBytes / extent)
      return false;
    bytes *= extent;
  }
  total += bytes;
  return total <= gopt::fuzz::kMaxTensorBytes;
}

bool withinBudget(const gopt::plan::Plan &proto) {
  size_t total = proto.constants().size();
  if (total > gopt::fuzz::kMaxTensorBytes)
    return false;
  for (const gopt::plan::TensorInfo &t : proto.tensors())
    if (!addTensorBytes(Shape(t.shape().begin(), t.shape().end()),
                        fromProtoDType(t.dtype()), total))
      return false;
  return true;
}

/// Trips a fuzzed loop may run: a plan may legally ask for 2^62 of them
/// (ONNX's Loop does), which is a long computation, not a finding.
constexpr int64_t kMaxLoopTrips = 1024;

/// False when a loop in `proto` or its regions may run more than
/// kMaxLoopTrips times: its trip count is not a constant within it.
bool loopsBounded(const gopt::plan::Plan &proto) {
  for (const gopt::plan::Op &op : proto.ops()) {
    if (op.kind() != "loop")
      continue;
    if (op.inputs_size() == 0 || op.inputs(0) < 0 ||
        op.inputs(0) >= proto.tensors_size())
      return false;
    const gopt::plan::TensorInfo &trips = proto.tensors(op.inputs(0));
    int64_t count;
    if (trips.kind() != gopt::plan::TensorInfo::CONSTANT ||
        trips.constant_size() != sizeof count ||
        proto.constants().size() < sizeof count ||
        trips.constant_offset() > proto.constants().size() - sizeof count)
      return false;
    std::memcpy(&count, proto.constants().data() + trips.constant_offset(),
                sizeof count);
    if (count > kMaxLoopTrips)
      return false;
  }
  for (const gopt::plan::Plan &region : proto.subplans())
    if (!loopsBounded(region))
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gopt::fuzz::quietProtobuf();
  std::string bytes(reinterpret_cast<const char *>(data), size);
  StatusOr<Plan> plan = Plan::loadFromBytes(bytes, "fuzz.gplan");
  if (!plan.ok() || !withinBudget(plan->proto()) ||
      !loopsBounded(plan->proto()))
    return 0;
  SessionOptions options;
  options.backend = "reference";
  options.batchSize = 1;
  options.threads = 1;
  options.memoryLimitBytes = gopt::fuzz::kMaxTensorBytes;
  StatusOr<std::unique_ptr<Session>> session = Session::create(*plan, options);
  if (!session.ok())
    return 0;
  Session &s = **session;
  for (const TensorDesc &input : s.inputs()) {
    size_t total = 0;
    if (!addTensorBytes(input.shape, input.dtype, total))
      return 0;
    if (!s.setInput(input.name, Tensor::allocate(input.dtype, input.shape))
             .ok())
      return 0;
  }
  if (!s.run().ok())
    return 0;
  for (const TensorDesc &output : s.outputs())
    (void)s.output(output.name);
  return 0;
}
