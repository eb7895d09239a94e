//===- TestUtil.h - Helpers of the runtime unit tests -----------*- C++ -*-===//
#ifndef GOPT_UNITTESTS_RUNTIME_TESTUTIL_H
#define GOPT_UNITTESTS_RUNTIME_TESTUTIL_H

#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/Session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace gopt::runtime::testing {

inline Tensor makeF32(const Shape &shape, const std::vector<float> &values) {
  Tensor t = Tensor::allocate(DType::kF32, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements());
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

template <typename T>
Tensor makeTensor(DType dtype, const Shape &shape,
                  const std::vector<T> &values) {
  Tensor t = Tensor::allocate(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements());
  for (size_t i = 0; i < values.size(); ++i) // vector<bool> has no data()
    t.data<T>()[i] = values[i];
  return t;
}

inline Tensor randomF32(const Shape &shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = Tensor::allocate(DType::kF32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

// f32 <-> bf16 (round to nearest even), element by element.
inline Tensor toBf16(const Tensor &f) {
  Tensor t = Tensor::allocate(DType::kBF16, f.shape());
  for (int64_t i = 0; i < f.numElements(); ++i)
    t.data<uint16_t>()[i] = floatToBf16(f.data<float>()[i]);
  return t;
}

inline Tensor toF32(const Tensor &b) {
  Tensor t = Tensor::allocate(DType::kF32, b.shape());
  for (int64_t i = 0; i < b.numElements(); ++i)
    t.data<float>()[i] = bf16ToFloat(b.data<uint16_t>()[i]);
  return t;
}

inline Tensor randomBf16(const Shape &shape, uint32_t seed) {
  return toBf16(randomF32(shape, seed));
}

template <typename T> std::vector<T> values(const Tensor &t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numElements());
}

// What a plan computed and how (the per-op profile: kinds, implementations).
struct RunResult {
  std::vector<Tensor> outputs;
  std::vector<OpProfile> profiles;
  Status status = Status::success(); // of the first failing run
};

// Runs `plan` twice (no state may carry over between runs) at `batch`.
// With `expectSuccess`, a failing run is a test failure; else the caller
// checks `status`.
inline RunResult runPlan(const Plan &plan, const std::string &backend,
                         const std::vector<Tensor> &inputs, int64_t batch = 1,
                         bool expectSuccess = true) {
  RunResult result;
  SessionOptions options;
  options.backend = backend;
  options.threads = 2;
  options.batchSize = batch;
  auto session = Session::create(plan, options);
  EXPECT_TRUE(session.ok()) << session.status().toString();
  if (!session.ok())
    return result;
  std::vector<TensorDesc> ins = (*session)->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE((*session)->setInput(ins[i].name, inputs[i]).ok());
  for (int r = 0; r < 2; ++r) {
    result.status = (*session)->run();
    if (expectSuccess) {
      EXPECT_TRUE(result.status.ok()) << result.status.toString();
    }
    if (!result.status.ok())
      return result;
  }
  for (const TensorDesc &out : (*session)->outputs())
    result.outputs.push_back((*session)->output(out.name)->clone());
  result.profiles = (*session)->opProfiles();
  return result;
}

// The kinds of the profile's rows (fused kinds joined by +).
inline std::multiset<std::string> kinds(const RunResult &r) {
  std::multiset<std::string> k;
  for (const OpProfile &p : r.profiles)
    k.insert(p.kind);
  return k;
}

struct OutSpec {
  DType dtype;
  Shape shape;
};

// How runOp builds and runs its one-op plan: inputs listed in `constants`
// become CONSTANT tensors; `runs` > 1 runs the session again (a kernel's
// results must not depend on state left by an earlier run).
struct OpRunOptions {
  std::string backend = "reference";
  std::vector<int> constants;
  int threads = 0; // the session's default
  int runs = 1;
};

// A one-op plan's results (owning copies) and the session's profile rows.
struct OpRun {
  std::vector<Tensor> outputs;
  std::vector<OpProfile> profiles;
};

// The op's name in runOp's plans: its profile row.
inline std::string opRowName(const std::string &kind) { return kind + "_op"; }

inline StatusOr<OpRun> runOpProfiled(const std::string &kind,
                                     const AttrMap &attrs,
                                     const std::vector<Tensor> &inputs,
                                     const std::vector<OutSpec> &outs,
                                     const OpRunOptions &o) {
  auto isConst = [&](size_t i) {
    return std::find(o.constants.begin(), o.constants.end(),
                     static_cast<int>(i)) != o.constants.end();
  };
  PlanBuilder b(kind);
  std::vector<int> ins, results;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(isConst(i)
                      ? b.addConstant("c" + std::to_string(i), inputs[i])
                      : b.addInput("in" + std::to_string(i), inputs[i].dtype(),
                                   inputs[i].shape()));
  for (size_t i = 0; i < outs.size(); ++i)
    results.push_back(
        b.addOutput("out" + std::to_string(i), outs[i].dtype, outs[i].shape));
  b.addOp(kind, opRowName(kind), ins, results, attrs);
  GOPT_ASSIGN_OR_RETURN(Plan plan, b.build());
  SessionOptions options;
  options.backend = o.backend;
  options.threads = o.threads;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::create(plan, options));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!isConst(i))
      GOPT_RETURN_IF_ERROR(
          session->setInput("in" + std::to_string(i), inputs[i]));
  for (int r = 0; r < o.runs; ++r)
    GOPT_RETURN_IF_ERROR(session->run());
  OpRun run;
  for (size_t i = 0; i < outs.size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(Tensor t, session->output("out" + std::to_string(i)));
    run.outputs.push_back(t.clone());
  }
  run.profiles = session->opProfiles();
  return run;
}

// Builds a one-op plan, runs it on `backend` and returns owning copies of
// the results.
inline StatusOr<std::vector<Tensor>>
runOp(const std::string &kind, const AttrMap &attrs,
      const std::vector<Tensor> &inputs, const std::vector<OutSpec> &outs,
      const std::string &backend = "reference",
      const std::vector<int> &constants = {}) {
  OpRunOptions o;
  o.backend = backend;
  o.constants = constants;
  GOPT_ASSIGN_OR_RETURN(OpRun run, runOpProfiled(kind, attrs, inputs, outs, o));
  return std::move(run.outputs);
}

// The op on "reference" and on "cpu" (2 threads): its results from each,
// and the implementation "cpu" ran it with ("(no row)" if none); other
// rows of "cpu"'s profile must be of a kind in `otherRows` unless it is
// empty. Fails the test on an error.
struct BackendPair {
  Tensor reference, cpu;
  std::string cpuImplementation = "(no row)";
};
inline BackendPair
runOnBothBackends(const std::string &kind, const AttrMap &attrs,
                  const std::vector<Tensor> &inputs, const OutSpec &out,
                  const std::vector<int> &constants = {}, int runs = 1,
                  const std::set<std::string> &otherRows = {}) {
  BackendPair pair{Tensor::allocate(out.dtype, out.shape),
                   Tensor::allocate(out.dtype, out.shape)};
  for (const char *backend : {"reference", "cpu"}) {
    OpRunOptions o;
    o.backend = backend;
    o.constants = constants;
    o.threads = 2;
    o.runs = runs;
    StatusOr<OpRun> run = runOpProfiled(kind, attrs, inputs, {out}, o);
    EXPECT_TRUE(run.ok()) << backend << ": " << run.status().toString();
    if (!run.ok())
      return pair;
    (std::string(backend) == "cpu" ? pair.cpu : pair.reference) =
        run->outputs[0];
    if (std::string(backend) != "cpu")
      continue;
    for (const OpProfile &row : run->profiles) {
      if (row.name == opRowName(kind))
        pair.cpuImplementation = row.implementation;
      else if (!otherRows.empty()) {
        EXPECT_TRUE(otherRows.count(row.kind)) << "unexpected row " << row.kind;
      }
    }
  }
  return pair;
}

// Runs a single-result op and returns its result, failing the test on error.
inline Tensor runOk(const std::string &kind, const AttrMap &attrs,
                    const std::vector<Tensor> &inputs, const OutSpec &out,
                    const std::string &backend = "reference",
                    const std::vector<int> &constants = {}) {
  auto result = runOp(kind, attrs, inputs, {out}, backend, constants);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  if (!result.ok())
    return Tensor::allocate(out.dtype, out.shape);
  return (*result)[0];
}

inline void expectNear(const std::vector<float> &actual,
                       const std::vector<float> &expected, float tol = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tol) << "at element " << i;
}

inline float maxAbsDiff(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.shape(), b.shape());
  float m = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    m = std::max(m, std::abs(a.data<float>()[i] - b.data<float>()[i]));
  return m;
}

// What the CPU backend made of a plan of one output, against the
// reference backend: their largest difference and the implementation and
// kind of the last "cpu" profile row that `picks`.
struct CpuOutcome {
  std::string impl, kind;
  float maxDiff = 0;
};

inline CpuOutcome
cpuAgainstReference(PlanBuilder &b, const std::vector<Tensor> &inputs,
                    const std::function<bool(const OpProfile &)> &picks) {
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  CpuOutcome o;
  if (!plan.ok())
    return o;
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult cpu = runPlan(*plan, "cpu", inputs);
  if (ref.outputs.size() != 1 || cpu.outputs.size() != 1)
    return o;
  o.maxDiff = maxAbsDiff(ref.outputs[0], cpu.outputs[0]);
  for (const OpProfile &p : cpu.profiles)
    if (picks(p)) {
      o.impl = p.implementation;
      o.kind = p.kind;
    }
  return o;
}

// The same, picking the last row whose kind starts with `kindPrefix`.
inline CpuOutcome cpuAgainstReference(PlanBuilder &b,
                                      const std::vector<Tensor> &inputs,
                                      const std::string &kindPrefix) {
  return cpuAgainstReference(b, inputs, [&](const OpProfile &p) {
    return p.kind.rfind(kindPrefix, 0) == 0;
  });
}

} // namespace gopt::runtime::testing

#endif // GOPT_UNITTESTS_RUNTIME_TESTUTIL_H
