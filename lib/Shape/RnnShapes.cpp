//===- RnnShapes.cpp - Shape functions of the recurrent ops ---------------===//
//
// lstm, gru and rnn (GoptRnnOps.td): one function for the three, which
// differ only in their number of gate blocks and state operands.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>

namespace gopt::shape {

using detail::fail;

namespace {

bool sameDim(int64_t a, int64_t b) {
  return isDynamic(a) || isDynamic(b) || a == b;
}

/// `actual` has `expected`'s shape (dynamic dimensions match anything), or,
/// where `scalarAllowed`, is rank-0.
Result checkOperand(DimsRef actual, const Dims &expected, const char *name,
                    bool scalarAllowed) {
  if (scalarAllowed && actual.empty())
    return Result::success();
  bool ok = actual.size() == expected.size();
  for (size_t i = 0; ok && i < actual.size(); ++i)
    ok = sameDim(actual[i], expected[i]);
  if (!ok)
    return fail("expects ", name, " of shape ", formatShape(expected),
                scalarAllowed ? " (or a scalar)" : "", ", got ",
                formatShape(actual));
  return Result::success();
}

} // namespace

Result inferRecurrentShape(DimsRef x, DimsRef w, DimsRef r,
                           const RecurrentOperands &operands,
                           int64_t hiddenSize, std::string_view direction,
                           int64_t gates, Dims &y, Dims &state) {
  if (hiddenSize <= 0)
    return fail("expects hidden_size > 0, got ", hiddenSize);
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return fail("expects direction forward, reverse or bidirectional, got '",
                direction, "'");
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (x.size() != 3)
    return fail("expects x of rank 3 [seq_length, batch, input_size], got ",
                formatShape(x));
  int64_t steps = x[0], batch = x[1], inputSize = x[2];
  int64_t gateRows = gates * hiddenSize;
  if (Result res = checkOperand(w, {directions, gateRows, inputSize}, "w",
                                /*scalarAllowed=*/false);
      res.failed())
    return res;
  if (Result res = checkOperand(r, {directions, gateRows, hiddenSize}, "r",
                                /*scalarAllowed=*/false);
      res.failed())
    return res;
  if (operands.b)
    if (Result res = checkOperand(*operands.b, {directions, 2 * gateRows}, "b",
                                  /*scalarAllowed=*/true);
        res.failed())
      return res;
  Dims stateShape = {directions, batch, hiddenSize};
  for (auto [operand, name] : {std::pair{operands.initialH, "initial_h"},
                               {operands.initialC, "initial_c"}})
    if (operand)
      if (Result res = checkOperand(*operand, stateShape, name,
                                    /*scalarAllowed=*/true);
          res.failed())
        return res;
  if (operands.peepholes)
    if (Result res =
            checkOperand(*operands.peepholes, {directions, 3 * hiddenSize}, "p",
                         /*scalarAllowed=*/true);
        res.failed())
      return res;
  if (operands.sequenceLens)
    if (Result res = checkOperand(*operands.sequenceLens, {batch},
                                  "sequence_lens", /*scalarAllowed=*/false);
        res.failed())
      return res;
  y = {steps, directions, batch, hiddenSize};
  state = stateShape;
  return Result::success();
}

Result checkRecurrentResultGrads(DimsRef y, DimsRef state, DimsRef dy,
                                 const std::vector<DimsRef> &stateGrads) {
  Dims yShape(y.begin(), y.end()), stateShape(state.begin(), state.end());
  if (Result res = checkOperand(dy, yShape, "dy", /*scalarAllowed=*/true);
      res.failed())
    return res;
  const char *names[] = {"dy_h", "dy_c"};
  for (size_t i = 0; i < stateGrads.size(); ++i)
    if (Result res = checkOperand(stateGrads[i], stateShape, names[i],
                                  /*scalarAllowed=*/true);
        res.failed())
      return res;
  return Result::success();
}

} // namespace gopt::shape
