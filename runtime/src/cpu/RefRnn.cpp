//===- RefRnn.cpp - Reference lstm, gru and rnn ---------------------------===//
//
// Straightforward loops, one batch row and one step at a time, with dot
// products accumulated in double: the oracle the fast kernels are checked
// against. The gradients (lstm_grad, gru_grad, rnn_grad) recompute the
// forward and backpropagate through time the same way. Gate blocks are in
// ONNX's order (lstm i, o, f, c; gru z, r, h).
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

/// Per-step values of one sequence's forward pass that backpropagation
/// through time reads: the state before the step, the gate activations and
/// whether each gate input passed the clip.
struct StepRecord {
  std::vector<double> hPrev, cPrev, c, act, pre, gruRecurrent;
};

/// A float gradient the kernel sums in double at the operand's full shape
/// (`full` elements) and writes to `out`: summed to one value where the
/// operand is rank-0 (broadcast).
struct GradSum {
  std::vector<double> sum;
  explicit GradSum(int64_t full) : sum(full, 0.0) {}
  void store(Tensor &out) const {
    float *o = out.data<float>();
    if (out.rank() == 0) {
      double total = 0.0;
      for (double v : sum)
        total += v;
      o[0] = static_cast<float>(total);
      return;
    }
    for (size_t i = 0; i < sum.size(); ++i)
      o[i] = static_cast<float>(sum[i]);
  }
};

/// Backpropagation through time of recurrentKernel's forward: operands as
/// the forward's (`floatCount` of them), then dy, dy_h (and lstm's dy_c),
/// then the optional sequence_lens. Each (direction, batch row) is an
/// independent sequence: its forward is recomputed and stored, then walked
/// back from its last step.
Status recurrentGradKernel(const RecurrentParams &p,
                           const std::vector<Tensor> &in,
                           std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  const int64_t steps = x.dim(0), batch = x.dim(1), inputSize = x.dim(2);
  const int64_t hidden = p.hidden;
  const bool lstm = p.cell == Cell::kLstm, gru = p.cell == Cell::kGru;
  const int64_t gates = lstm ? 4 : gru ? 3 : 1;
  const int64_t rows = gates * hidden;
  const int64_t directions = p.direction == "bidirectional" ? 2 : 1;
  const size_t floatCount = lstm ? 7 : 5;
  const size_t gradCount = lstm ? 3 : 2;
  StatusOr<std::vector<int64_t>> lens =
      sequenceLengths(in, floatCount + gradCount, batch, steps);
  if (!lens.ok())
    return lens.status();
  const float *px = x.data<float>();
  const float *pw = in[1].data<float>(), *pr = in[2].data<float>();
  Broadcast bias = broadcast(in[3]), h0 = broadcast(in[4]);
  Broadcast c0 = lstm ? broadcast(in[5]) : Broadcast{nullptr, true};
  Broadcast peep = lstm ? broadcast(in[6]) : Broadcast{nullptr, true};
  Broadcast dy = broadcast(in[floatCount]);
  Broadcast dyH = broadcast(in[floatCount + 1]);
  Broadcast dyC =
      lstm ? broadcast(in[floatCount + 2]) : Broadcast{nullptr, true};

  const int64_t stateSize = directions * batch * hidden;
  GradSum dx(x.numElements()), dw(directions * rows * inputSize),
      dr(directions * rows * hidden), db(directions * 2 * rows), dh0(stateSize),
      dc0(lstm ? stateSize : 0), dp(directions * 3 * hidden);

  auto clip = [&](double v) {
    return p.clip > 0 ? std::clamp(v, -double(p.clip), double(p.clip)) : v;
  };
  // d clip(v) / dv: 1 inside the clip, 0 where it clamped.
  auto passes = [&](double v) {
    return p.clip <= 0 || (v >= -double(p.clip) && v <= double(p.clip));
  };
  std::vector<StepRecord> records(steps);
  std::vector<double> xg(rows), rg(rows), h(hidden), c(hidden);
  std::vector<double> dh(hidden), dc(hidden), da(rows), daR(rows),
      dhPrev(hidden), dcPrev(hidden);
  for (int64_t d = 0; d < directions; ++d) {
    const bool reverse = p.direction == "reverse" || d == 1;
    const float *w = pw + d * rows * inputSize, *r = pr + d * rows * hidden;
    const int64_t wb = d * 2 * rows, rb = wb + rows, pd = d * 3 * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t state = (d * batch + b) * hidden;
      for (int64_t j = 0; j < hidden; ++j) {
        h[j] = h0.at(state + j);
        c[j] = lstm ? c0.at(state + j) : 0.0;
      }
      const int64_t len = (*lens)[b];
      // Forward, keeping what the backward pass reads. `pre` holds each
      // gate's input before the clip, `act` its activation (block order as
      // the weights').
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const float *xt = px + (t * batch + b) * inputSize;
        StepRecord &rec = records[step];
        rec.hPrev = h;
        rec.cPrev = c;
        rec.act.assign(rows, 0.0);
        rec.pre.assign(rows, 0.0);
        for (int64_t k = 0; k < rows; ++k) {
          double sx = bias.at(wb + k), sr = bias.at(rb + k);
          for (int64_t i = 0; i < inputSize; ++i)
            sx += double(xt[i]) * w[k * inputSize + i];
          for (int64_t j = 0; j < hidden; ++j)
            sr += h[j] * r[k * hidden + j];
          xg[k] = sx;
          rg[k] = sr;
        }
        if (p.cell == Cell::kRnn) {
          for (int64_t j = 0; j < hidden; ++j) {
            rec.pre[j] = xg[j] + rg[j];
            rec.act[j] = std::tanh(clip(rec.pre[j]));
            h[j] = rec.act[j];
          }
        } else if (lstm) {
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t i = j, o = hidden + j, f = 2 * hidden + j,
                          g = 3 * hidden + j;
            rec.pre[i] = xg[i] + rg[i] + peep.at(pd + j) * c[j];
            rec.act[i] = sigmoid(clip(rec.pre[i]));
            if (p.inputForget) {
              rec.act[f] = 1.0 - rec.act[i];
            } else {
              rec.pre[f] = xg[f] + rg[f] + peep.at(pd + 2 * hidden + j) * c[j];
              rec.act[f] = sigmoid(clip(rec.pre[f]));
            }
            rec.pre[g] = xg[g] + rg[g];
            rec.act[g] = std::tanh(clip(rec.pre[g]));
            c[j] = rec.act[f] * c[j] + rec.act[i] * rec.act[g];
            rec.pre[o] = xg[o] + rg[o] + peep.at(pd + hidden + j) * c[j];
            rec.act[o] = sigmoid(clip(rec.pre[o]));
            h[j] = rec.act[o] * std::tanh(c[j]);
          }
          rec.c = c;
        } else {
          // gru: blocks z, r, h. `gruRecurrent` is the candidate's
          // recurrent term before the reset gate (linear_before_reset) or
          // the reset state r * h (without).
          rec.gruRecurrent.assign(hidden, 0.0);
          for (int64_t j = 0; j < 2 * hidden; ++j) {
            rec.pre[j] = xg[j] + rg[j];
            rec.act[j] = sigmoid(clip(rec.pre[j]));
          }
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t n = 2 * hidden + j;
            double recurrent;
            if (p.linearBeforeReset) {
              rec.gruRecurrent[j] = rg[n];
              recurrent = rec.act[hidden + j] * rg[n];
            } else {
              recurrent = bias.at(rb + n);
              const float *rRow = r + n * hidden;
              for (int64_t k = 0; k < hidden; ++k)
                recurrent += rec.act[hidden + k] * h[k] * rRow[k];
            }
            rec.pre[n] = xg[n] + recurrent;
            rec.act[n] = std::tanh(clip(rec.pre[n]));
          }
          if (!p.linearBeforeReset)
            for (int64_t k = 0; k < hidden; ++k)
              rec.gruRecurrent[k] = rec.act[hidden + k] * h[k];
          for (int64_t j = 0; j < hidden; ++j) {
            double z = rec.act[j];
            h[j] = (1.0 - z) * rec.act[2 * hidden + j] + z * h[j];
          }
        }
      }

      // Backward from the final states' gradients.
      for (int64_t j = 0; j < hidden; ++j) {
        dh[j] = dyH.at(state + j);
        dc[j] = lstm ? dyC.at(state + j) : 0.0;
      }
      for (int64_t step = len - 1; step >= 0; --step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const StepRecord &rec = records[step];
        const int64_t yAt = ((t * directions + d) * batch + b) * hidden;
        for (int64_t j = 0; j < hidden; ++j)
          dh[j] += dy.at(yAt + j);
        // da: the gradient of each gate's input (through its input weights
        // and input bias); daR: of its recurrent part (recurrent weights and
        // bias), which differs only for gru's candidate.
        std::fill(dhPrev.begin(), dhPrev.end(), 0.0);
        std::fill(dcPrev.begin(), dcPrev.end(), 0.0);
        if (p.cell == Cell::kRnn) {
          for (int64_t j = 0; j < hidden; ++j) {
            double a = rec.act[j];
            da[j] = passes(rec.pre[j]) ? dh[j] * (1.0 - a * a) : 0.0;
            daR[j] = da[j];
          }
        } else if (lstm) {
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t i = j, o = hidden + j, f = 2 * hidden + j,
                          g = 3 * hidden + j;
            double gi = rec.act[i], go = rec.act[o], gf = rec.act[f],
                   gg = rec.act[g];
            double tc = std::tanh(rec.c[j]);
            double dao =
                passes(rec.pre[o]) ? dh[j] * tc * go * (1.0 - go) : 0.0;
            double dcj = dc[j] + dh[j] * go * (1.0 - tc * tc) +
                         dao * peep.at(pd + hidden + j);
            double dgi = dcj * gg, dgf = dcj * rec.cPrev[j], dgg = dcj * gi;
            double daf = 0.0;
            if (p.inputForget)
              dgi -= dgf; // f = 1 - i
            else
              daf = passes(rec.pre[f]) ? dgf * gf * (1.0 - gf) : 0.0;
            double dai = passes(rec.pre[i]) ? dgi * gi * (1.0 - gi) : 0.0;
            double dag = passes(rec.pre[g]) ? dgg * (1.0 - gg * gg) : 0.0;
            dcPrev[j] = dcj * gf + dai * peep.at(pd + j) +
                        daf * peep.at(pd + 2 * hidden + j);
            dp.sum[pd + j] += dai * rec.cPrev[j];
            dp.sum[pd + 2 * hidden + j] += daf * rec.cPrev[j];
            dp.sum[pd + hidden + j] += dao * rec.c[j];
            da[i] = daR[i] = dai;
            da[o] = daR[o] = dao;
            da[f] = daR[f] = daf;
            da[g] = daR[g] = dag;
          }
        } else {
          std::vector<double> dReset(hidden, 0.0);
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t n = 2 * hidden + j;
            double z = rec.act[j], cand = rec.act[n];
            dhPrev[j] += dh[j] * z;
            double dz = dh[j] * (rec.hPrev[j] - cand);
            da[j] = passes(rec.pre[j]) ? dz * z * (1.0 - z) : 0.0;
            double dan = passes(rec.pre[n])
                             ? dh[j] * (1.0 - z) * (1.0 - cand * cand)
                             : 0.0;
            da[n] = dan;
            if (p.linearBeforeReset) {
              daR[n] = dan * rec.act[hidden + j];
              dReset[j] += dan * rec.gruRecurrent[j];
            }
          }
          if (!p.linearBeforeReset) {
            // The candidate reads R_h (r * h) + Rb_h: its recurrent
            // weights see r * h, and h and r get R_h^T dan through it.
            for (int64_t j = 0; j < hidden; ++j) {
              const int64_t n = 2 * hidden + j;
              const float *rRow = r + n * hidden;
              for (int64_t k = 0; k < hidden; ++k) {
                double dResetH = da[n] * rRow[k];
                dReset[k] += dResetH * rec.hPrev[k];
                dhPrev[k] += dResetH * rec.act[hidden + k];
                dr.sum[(d * rows + n) * hidden + k] +=
                    da[n] * rec.gruRecurrent[k];
              }
              db.sum[rb + n] += da[n];
            }
          }
          for (int64_t j = 0; j < hidden; ++j) {
            double rj = rec.act[hidden + j];
            da[hidden + j] =
                passes(rec.pre[hidden + j]) ? dReset[j] * rj * (1.0 - rj) : 0.0;
            daR[j] = da[j];
            daR[hidden + j] = da[hidden + j];
          }
        }
        // The gates' inputs back to x, w, r, b and the previous state. gru
        // without linear_before_reset did its candidate's recurrent part
        // above.
        const bool skipCandidateRecurrent = gru && !p.linearBeforeReset;
        const float *xt = px + (t * batch + b) * inputSize;
        double *dxt = dx.sum.data() + (t * batch + b) * inputSize;
        for (int64_t k = 0; k < rows; ++k) {
          if (da[k] != 0.0) {
            db.sum[wb + k] += da[k];
            double *dwRow = dw.sum.data() + (d * rows + k) * inputSize;
            const float *wRow = w + k * inputSize;
            for (int64_t i = 0; i < inputSize; ++i) {
              dwRow[i] += da[k] * xt[i];
              dxt[i] += da[k] * wRow[i];
            }
          }
          if (skipCandidateRecurrent && k >= 2 * hidden)
            continue;
          if (daR[k] != 0.0) {
            db.sum[rb + k] += daR[k];
            double *drRow = dr.sum.data() + (d * rows + k) * hidden;
            const float *rRow = r + k * hidden;
            for (int64_t j = 0; j < hidden; ++j) {
              drRow[j] += daR[k] * rec.hPrev[j];
              dhPrev[j] += daR[k] * rRow[j];
            }
          }
        }
        dh = dhPrev;
        if (lstm)
          dc = dcPrev;
      }
      for (int64_t j = 0; j < hidden; ++j) {
        dh0.sum[state + j] += dh[j];
        if (lstm)
          dc0.sum[state + j] += dc[j];
      }
    }
  }
  dx.store(out[0]);
  dw.store(out[1]);
  dr.store(out[2]);
  db.store(out[3]);
  dh0.store(out[4]);
  if (lstm) {
    dc0.store(out[5]);
    dp.store(out[6]);
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

Status lstmGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  op_attrs::LstmGradAttrs a(*ctx.op);
  return recurrentGradKernel({Cell::kLstm, a.hiddenSize(), a.direction(),
                              static_cast<float>(a.clip()), a.inputForget(),
                              false},
                             in, out);
}

Status gruGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  op_attrs::GruGradAttrs a(*ctx.op);
  return recurrentGradKernel({Cell::kGru, a.hiddenSize(), a.direction(),
                              static_cast<float>(a.clip()), false,
                              a.linearBeforeReset()},
                             in, out);
}

Status rnnGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  op_attrs::RnnGradAttrs a(*ctx.op);
  return recurrentGradKernel({Cell::kRnn, a.hiddenSize(), a.direction(),
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
  registerKernel(r, "lstm_grad", lstmGradKernel, D::kNumeric);
  registerKernel(r, "gru_grad", gruGradKernel, D::kNumeric);
  registerKernel(r, "rnn_grad", rnnGradKernel, D::kNumeric);
}

} // namespace gopt::runtime::ref
