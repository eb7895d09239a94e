//===- RefRnn.cpp - Reference lstm, gru and rnn ---------------------------===//
//
// Straightforward loops, one batch row and one step at a time, with dot
// products accumulated in double: the oracle the fast kernels are checked
// against. Gate blocks are in ONNX's order (lstm i, o, f, c; gru z, r, h).
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/OpAttrs.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gopt::runtime::ref {
namespace {

enum class Cell { kLstm, kGru, kRnn };

/// A float operand that is either its full shape or rank-0 (one value
/// broadcast, how the importer passes an absent ONNX input).
struct Broadcast {
  const float *data;
  bool scalar;
  float at(int64_t i) const { return scalar ? data[0] : data[i]; }
};

Broadcast broadcast(const Tensor &t) {
  return {t.data<float>(), t.rank() == 0};
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct RecurrentParams {
  Cell cell;
  int64_t hidden;
  std::string direction;
  float clip;
  bool inputForget;       // lstm
  bool linearBeforeReset; // gru
};

/// The lengths of the batch's sequences, each checked against [0, steps].
StatusOr<std::vector<int64_t>> sequenceLengths(const std::vector<Tensor> &in,
                                               size_t lensIndex, int64_t batch,
                                               int64_t steps) {
  std::vector<int64_t> lens(batch, steps);
  if (in.size() <= lensIndex)
    return lens;
  const Tensor &t = in[lensIndex];
  for (int64_t b = 0; b < batch; ++b) {
    int64_t v =
        t.dtype() == DType::kI32 ? t.data<int32_t>()[b] : t.data<int64_t>()[b];
    if (v < 0 || v > steps)
      return invalidArgument("sequence_lens[", b, "] = ", v, " is outside [0, ",
                             steps, "]");
    lens[b] = v;
  }
  return lens;
}

Status recurrentKernel(const RecurrentParams &p, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  const int64_t steps = x.dim(0), batch = x.dim(1), inputSize = x.dim(2);
  const int64_t hidden = p.hidden;
  const int64_t gates = p.cell == Cell::kLstm  ? 4
                        : p.cell == Cell::kGru ? 3
                                               : 1;
  const int64_t rows = gates * hidden;
  const int64_t directions = p.direction == "bidirectional" ? 2 : 1;
  const bool lstm = p.cell == Cell::kLstm;
  const size_t lensIndex = lstm ? 7 : 5;
  StatusOr<std::vector<int64_t>> lens =
      sequenceLengths(in, lensIndex, batch, steps);
  if (!lens.ok())
    return lens.status();
  const float *px = x.data<float>();
  const float *pw = in[1].data<float>(), *pr = in[2].data<float>();
  Broadcast bias = broadcast(in[3]), h0 = broadcast(in[4]);
  Broadcast c0 = lstm ? broadcast(in[5]) : Broadcast{nullptr, true};
  Broadcast peep = lstm ? broadcast(in[6]) : Broadcast{nullptr, true};
  float *py = out[0].data<float>(), *pyh = out[1].data<float>();
  float *pyc = lstm ? out[2].data<float>() : nullptr;
  std::fill(py, py + out[0].numElements(), 0.0f);

  auto clip = [&](double v) {
    return p.clip > 0 ? std::clamp(v, -double(p.clip), double(p.clip)) : v;
  };
  std::vector<double> xg(rows), rg(rows), h(hidden), c(hidden), next(hidden);
  for (int64_t d = 0; d < directions; ++d) {
    const bool reverse = p.direction == "reverse" || d == 1;
    const float *w = pw + d * rows * inputSize, *r = pr + d * rows * hidden;
    const int64_t wb = d * 2 * rows, rb = wb + rows;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t state = (d * batch + b) * hidden;
      for (int64_t j = 0; j < hidden; ++j) {
        h[j] = h0.at(state + j);
        c[j] = lstm ? c0.at(state + j) : 0.0;
      }
      const int64_t len = (*lens)[b];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const float *xt = px + (t * batch + b) * inputSize;
        for (int64_t k = 0; k < rows; ++k) {
          double sx = bias.at(wb + k), sr = bias.at(rb + k);
          for (int64_t i = 0; i < inputSize; ++i)
            sx += double(xt[i]) * w[k * inputSize + i];
          for (int64_t j = 0; j < hidden; ++j)
            sr += h[j] * r[k * hidden + j];
          xg[k] = sx;
          rg[k] = sr;
        }
        for (int64_t j = 0; j < hidden; ++j) {
          if (p.cell == Cell::kRnn) {
            next[j] = std::tanh(clip(xg[j] + rg[j]));
          } else if (lstm) {
            // ONNX's blocks: i, o, f, c; peepholes: i, o, f.
            const int64_t pd = d * 3 * hidden;
            double gi = sigmoid(clip(xg[j] + rg[j] + peep.at(pd + j) * c[j]));
            double gf =
                p.inputForget
                    ? 1.0 - gi
                    : sigmoid(clip(xg[2 * hidden + j] + rg[2 * hidden + j] +
                                   peep.at(pd + 2 * hidden + j) * c[j]));
            double gc =
                std::tanh(clip(xg[3 * hidden + j] + rg[3 * hidden + j]));
            c[j] = gf * c[j] + gi * gc;
            double go = sigmoid(clip(xg[hidden + j] + rg[hidden + j] +
                                     peep.at(pd + hidden + j) * c[j]));
            next[j] = go * std::tanh(c[j]);
          }
        }
        if (p.cell == Cell::kGru) {
          // Blocks z, r, h. Without linear_before_reset the candidate's
          // recurrent term multiplies the reset hidden state by R_h.
          std::vector<double> reset(hidden);
          for (int64_t j = 0; j < hidden; ++j)
            reset[j] = sigmoid(clip(xg[hidden + j] + rg[hidden + j]));
          for (int64_t j = 0; j < hidden; ++j) {
            double z = sigmoid(clip(xg[j] + rg[j]));
            double recurrent;
            if (p.linearBeforeReset) {
              recurrent = reset[j] * rg[2 * hidden + j];
            } else {
              recurrent = bias.at(rb + 2 * hidden + j);
              const float *rRow = r + (2 * hidden + j) * hidden;
              for (int64_t k = 0; k < hidden; ++k)
                recurrent += reset[k] * h[k] * rRow[k];
            }
            double n = std::tanh(clip(xg[2 * hidden + j] + recurrent));
            next[j] = (1.0 - z) * n + z * h[j];
          }
        }
        h = next;
        float *yt = py + ((t * directions + d) * batch + b) * hidden;
        for (int64_t j = 0; j < hidden; ++j)
          yt[j] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < hidden; ++j) {
        pyh[state + j] = static_cast<float>(h[j]);
        if (lstm)
          pyc[state + j] = static_cast<float>(c[j]);
      }
    }
  }
  return Status::success();
}

Status lstmKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  op_attrs::LstmAttrs a(*ctx.op);
  return recurrentKernel({Cell::kLstm, a.hiddenSize(), a.direction(),
                          static_cast<float>(a.clip()), a.inputForget(), false},
                         in, out);
}

Status gruKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  op_attrs::GruAttrs a(*ctx.op);
  return recurrentKernel({Cell::kGru, a.hiddenSize(), a.direction(),
                          static_cast<float>(a.clip()), false,
                          a.linearBeforeReset()},
                         in, out);
}

Status rnnKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  op_attrs::RnnAttrs a(*ctx.op);
  return recurrentKernel({Cell::kRnn, a.hiddenSize(), a.direction(),
                          static_cast<float>(a.clip()), false, false},
                         in, out);
}

} // namespace

void registerRnnKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  // kNumeric: the float operands in f32 (f16/bf16 converted) and the
  // integer sequence_lens as they are.
  registerKernel(r, "lstm", lstmKernel, D::kNumeric);
  registerKernel(r, "gru", gruKernel, D::kNumeric);
  registerKernel(r, "rnn", rnnKernel, D::kNumeric);
}

} // namespace gopt::runtime::ref
