//===- NormShapes.cpp - Shape functions of the normalization ops ----------===//
//
// layer_norm, instance_norm and lrn (GoptNormOps.td).
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>

namespace gopt::shape {

using detail::fail;

namespace {

// Numpy broadcasting of `operand` to `target` (one-way: the target keeps
// its shape).
bool broadcastsTo(DimsRef operand, DimsRef target) {
  if (operand.size() > target.size())
    return false;
  size_t offset = target.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) {
    int64_t o = operand[i], t = target[offset + i];
    if (o != 1 && !isDynamic(o) && !isDynamic(t) && o != t)
      return false;
  }
  return true;
}

Result verifyPerChannel(DimsRef x, DimsRef scale, DimsRef bias,
                        int64_t channelAxis) {
  if (x.size() < 3)
    return fail("expects an input of rank >= 3 (batch, channels and at least "
                "one spatial dimension), got shape ",
                formatShape(x));
  int64_t channels = x[channelAxis];
  if (Result r = verifyChannelOperand(scale, channels, "scale"); r.failed())
    return r;
  return verifyChannelOperand(bias, channels, "bias");
}

} // namespace

int64_t normalizationChannelAxis(std::string_view format, int64_t rank) {
  return rank == 4 ? channelAxis(format, rank) : 1;
}

Result inferLayerNormShape(DimsRef x, DimsRef scale, DimsRef bias, int64_t axis,
                           Dims &result) {
  int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0)
    return fail("expects an input of rank >= 1, got a scalar");
  int64_t first = 0;
  if (Result r = normalizeAxis(axis, rank, "axis", first); r.failed())
    return r;
  DimsRef normalized = x.drop_front(static_cast<size_t>(first));
  for (auto [operand, name] : {std::pair{scale, "scale"}, {bias, "bias"}})
    if (!broadcastsTo(operand, normalized))
      return fail("expects ", name, " ", formatShape(operand),
                  " to broadcast to the normalized dimensions ",
                  formatShape(normalized));
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferInstanceNormShape(DimsRef x, DimsRef scale, DimsRef bias,
                              int64_t channelAxis, Dims &result) {
  if (Result r = verifyPerChannel(x, scale, bias, channelAxis); r.failed())
    return r;
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferLrnShape(DimsRef x, int64_t size, Dims &result) {
  if (x.size() < 3)
    return fail("expects an input of rank >= 3 (batch, channels and at least "
                "one spatial dimension), got shape ",
                formatShape(x));
  if (size < 1)
    return fail("expects size >= 1, got ", size);
  result.assign(x.begin(), x.end());
  return Result::success();
}

} // namespace gopt::shape
