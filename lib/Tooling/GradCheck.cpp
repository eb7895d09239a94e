//===- GradCheck.cpp - Autodiff gradients against finite differences -----===//
//
// The check that --gopt-autodiff is right for a given graph: the gradient
// plan returns the loss and d(loss)/d(param) for every parameter; moving a
// parameter element by +-epsilon (the parameters are session state) and
// re-running gives the central difference to compare with.
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/GradCheck.h"
#include "gopt/Tooling/ModelLoader.h"

#include "gopt/runtime/Npy.h"
#include "gopt/runtime/Session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace gopt::tooling {

using namespace gopt::runtime;

namespace {

std::string gradPipeline(const GradCheckOptions &o) {
  std::string p =
      "builtin.module(func.func(gopt-strip-debug-ops{training=true},"
      "gopt-lift-params{batch-norm-stats=true},gopt-train-batch-norm,";
  if (o.loss != "none")
    p += "gopt-add-loss{kind=" + o.loss + "},";
  return p + "gopt-autodiff,canonicalize))";
}

Tensor randomInput(const TensorDesc &desc, uint32_t seed) {
  Tensor t = Tensor::allocate(desc.dtype, desc.shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    switch (desc.dtype) {
    case DType::kF32:
      t.data<float>()[i] = normal(rng);
      break;
    case DType::kI64:
      t.data<int64_t>()[i] = i % 2;
      break;
    case DType::kI32:
      t.data<int32_t>()[i] = static_cast<int32_t>(i % 2);
      break;
    default:
      std::memset(t.data(), 0, t.byteSize());
      return t;
    }
  }
  return t;
}

StatusOr<float> lossAt(Session &session) {
  GOPT_RETURN_IF_ERROR(session.run());
  GOPT_ASSIGN_OR_RETURN(Tensor loss, session.output("loss"));
  return loss.data<float>()[0];
}

} // namespace

StatusOr<bool> runGradCheck(const GradCheckOptions &o) {
  ModelLoadOptions load;
  load.backend = o.backend;
  load.batchSize = o.batch;
  load.pipeline = gradPipeline(o);
  GOPT_ASSIGN_OR_RETURN(Plan plan, loadModelAsPlan(o.model, load));
  SessionOptions so;
  so.backend = o.backend;
  so.batchSize = o.batch;
  // The same dropout masks in every run, so the loss is a function of the
  // parameters alone.
  so.repeatRandomness = true;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::create(plan, so));
  uint32_t seed = 1;
  for (const TensorDesc &in : session->inputs()) {
    auto given =
        std::find_if(o.inputs.begin(), o.inputs.end(),
                     [&](const auto &p) { return p.first == in.name; });
    if (given != o.inputs.end()) {
      GOPT_ASSIGN_OR_RETURN(Tensor value, readNpy(given->second));
      GOPT_RETURN_IF_ERROR(session->setInput(in.name, value));
    } else {
      GOPT_RETURN_IF_ERROR(session->setInput(in.name, randomInput(in, seed++)));
    }
  }
  GOPT_ASSIGN_OR_RETURN(float loss0, lossAt(*session));
  std::printf("grad-check %s: loss %.6g, epsilon %g, atol %g, rtol %g\n",
              o.model.c_str(), loss0, o.epsilon, o.atol, o.rtol);

  // Gradients, copied: the views change with every run.
  std::vector<std::pair<std::string, std::vector<float>>> grads;
  for (const plan::Binding &b : plan.proto().outputs()) {
    if (b.name().rfind("grad/", 0) != 0)
      continue;
    GOPT_ASSIGN_OR_RETURN(Tensor g, session->output(b.name()));
    grads.push_back({b.name().substr(5),
                     std::vector<float>(g.data<float>(),
                                        g.data<float>() + g.numElements())});
  }
  if (grads.empty())
    return invalidArgument("'", o.model,
                           "': the gradient plan returns no "
                           "gradients (no parameters?)");

  bool allOk = true;
  int64_t checked = 0, skipped = 0;
  std::mt19937 rng(42);
  for (auto &[name, grad] : grads) {
    GOPT_ASSIGN_OR_RETURN(Tensor view, session->state(name));
    Tensor param = Tensor::allocate(view.dtype(), view.shape());
    std::memcpy(param.data(), view.data(), view.byteSize());
    int64_t n = param.numElements();
    std::vector<int64_t> picks;
    if (n <= o.samplesPerParam) {
      for (int64_t i = 0; i < n; ++i)
        picks.push_back(i);
    } else {
      std::uniform_int_distribution<int64_t> pick(0, n - 1);
      for (int64_t i = 0; i < o.samplesPerParam; ++i)
        picks.push_back(pick(rng));
    }
    double maxErr = 0;
    int failures = 0, kinks = 0;
    float e = static_cast<float>(o.epsilon);
    auto lossWith = [&](int64_t i, float value) -> StatusOr<float> {
      param.data<float>()[i] = value;
      GOPT_RETURN_IF_ERROR(session->setState(name, param));
      return lossAt(*session);
    };
    auto within = [&](double a, double b) {
      return std::fabs(a - b) <=
             o.atol + o.rtol * std::max(std::fabs(a), std::fabs(b));
    };
    for (int64_t i : picks) {
      float saved = param.data<float>()[i];
      GOPT_ASSIGN_OR_RETURN(float up, lossWith(i, saved + e));
      GOPT_ASSIGN_OR_RETURN(float down, lossWith(i, saved - e));
      GOPT_RETURN_IF_ERROR(lossWith(i, saved).status());
      double numeric = (double(up) - double(down)) / (2.0 * e);
      double forward = (double(up) - loss0) / e;
      double backward = (loss0 - double(down)) / e;
      double analytic = grad[i];
      // Where the one-sided differences disagree, the loss has a kink (a
      // relu or max crossing) within epsilon: no derivative to compare.
      // (A fixed, generous bound: curvature alone moves the one-sided
      // differences apart by O(epsilon).)
      bool kink =
          std::fabs(forward - backward) >
          1e-3 + 0.2 * std::max(std::fabs(forward), std::fabs(backward));
      if (kink && !within(numeric, analytic)) {
        ++kinks;
        continue;
      }
      double err = std::fabs(numeric - analytic);
      maxErr = std::max(maxErr, err);
      if (!within(numeric, analytic)) {
        if (failures++ < 3)
          std::printf("  MISMATCH %s[%lld]: autodiff %.6g, finite "
                      "difference %.6g\n",
                      name.c_str(), static_cast<long long>(i), analytic,
                      numeric);
      }
    }
    std::printf("  %-32s %8lld values, %zu checked, max abs error %.3g: %s",
                name.c_str(), static_cast<long long>(n), picks.size() - kinks,
                maxErr, failures ? "MISMATCH" : "ok");
    if (kinks)
      std::printf(" (%d at a kink skipped)", kinks);
    std::printf("\n");
    skipped += kinks;
    checked += picks.size() - kinks;
    allOk &= failures == 0;
  }
  // A check where every sample sat on a kink proves nothing.
  if (checked == 0 || skipped > checked) {
    std::printf("GRADIENT CHECK INCONCLUSIVE: %lld of %lld samples at kinks "
                "(try another --epsilon)\n",
                static_cast<long long>(skipped),
                static_cast<long long>(checked + skipped));
    return false;
  }
  std::printf("%s\n", allOk ? "gradients match finite differences"
                            : "GRADIENT MISMATCH");
  return allOk;
}

} // namespace gopt::tooling
