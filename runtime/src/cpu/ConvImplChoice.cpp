//===- ConvImplChoice.cpp - A batch-1 convolution's kernel by its time ----===//
#include "ConvImplChoice.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <omp.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace gopt::runtime::cpu {

dnnl::engine &cpuEngine();

// Off unless "1": with ResNet-50's wide 1x1 layers on nChw16c (where
// jit_1x1 is oneDNN's first kernel anyway) it measured no faster, and it
// made creating the session 4x slower on the loaded machine.
bool convMeasuredImplEnabled() {
  const char *setting = std::getenv("GOPT_CONV_MEASURED_IMPL");
  return setting && std::strcmp(setting, "1") == 0;
}

namespace {
using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;
using OpDesc = dnnl::convolution_forward::desc;
using MakeDesc = std::function<OpDesc(const dnnl::memory::desc &,
                                      const dnnl::memory::desc &)>;

// At most this many kernels are walked: oneDNN 2.6 lists a few JIT ones
// per layout before its GEMM and reference ones.
constexpr int kMaxImpls = 8;
// Rounds of one run per kernel, interleaved; the first warms up.
constexpr int kRounds = 10;

bool skipped(const char *impl) {
  return std::strstr(impl, "ref") || std::strstr(impl, "gemm");
}

// The `n`th kernel oneDNN lists for `desc`. oneDNN 2.6's list keeps a
// pointer to the op desc, so `desc` must outlive the walk (a temporary
// desc made next_impl end the list early).
PrimitiveDesc nth(const OpDesc &desc, const dnnl::primitive_attr &attr, int n) {
  PrimitiveDesc pd(desc, attr, cpuEngine());
  for (int i = 0; i < n; ++i)
    if (!pd.next_impl())
      throw dnnl::error(dnnl_iterator_ends, "no more kernels");
  return pd;
}

struct Trial {
  int index;
  dnnl::convolution_forward primitive;
  std::vector<dnnl::memory> memories; // kept alive for `args`
  std::unordered_map<int, dnnl::memory> args;
  double bestMs = 1e30;
};

dnnl::memory filled(const dnnl::memory::desc &md, int byte) {
  dnnl::memory m(md, cpuEngine());
  // 0x3c in every byte: 0.0115f, a plain (not denormal) value.
  std::memset(m.get_data_handle(), byte, md.get_size());
  return m;
}

// The choices made in this process, by convolution (its op desc's bytes,
// the post-ops' kinds, the thread count): a network's repeated blocks
// (ResNet-50's layer3 has five alike) and later sessions of the same
// model time each convolution once. -1: `first`.
std::string choiceKey(const OpDesc &desc, const dnnl::primitive_attr &attr,
                      const std::string &firstImpl) {
  std::string key(reinterpret_cast<const char *>(&desc.data),
                  sizeof(desc.data));
  dnnl::post_ops ops = attr.get_post_ops();
  for (int i = 0; i < ops.len(); ++i)
    key += static_cast<char>(ops.kind(i));
  key += "/" + std::to_string(omp_get_max_threads()) + "/" + firstImpl;
  return key;
}

std::mutex choicesMutex;
std::unordered_map<std::string, int> &choices() {
  static std::unordered_map<std::string, int> map;
  return map;
}
} // namespace

PrimitiveDesc fastestConvImpl(const PrimitiveDesc &first,
                              const MakeDesc &make) {
  try {
    const OpDesc desc = make(first.src_desc(), first.dst_desc());
    const dnnl::primitive_attr attr = first.get_primitive_attr();
    // -1: `first` itself; others: places in the list for its layouts.
    std::vector<int> candidates = {-1};
    std::string firstImpl = first.impl_info_str();
    const std::string key = choiceKey(desc, attr, firstImpl);
    {
      std::lock_guard<std::mutex> lock(choicesMutex);
      auto known = choices().find(key);
      if (known != choices().end())
        return known->second < 0 ? first : nth(desc, attr, known->second);
    }
    auto remember = [&](int index) {
      std::lock_guard<std::mutex> lock(choicesMutex);
      choices()[key] = index;
    };
    PrimitiveDesc it(desc, attr, cpuEngine());
    for (int i = 0; i < kMaxImpls && !skipped(it.impl_info_str()); ++i) {
      if (firstImpl != it.impl_info_str() &&
          it.src_desc() == first.src_desc() &&
          it.dst_desc() == first.dst_desc())
        candidates.push_back(i);
      if (!it.next_impl())
        break;
    }
    if (candidates.size() < 2) {
      remember(-1);
      return first;
    }
    std::vector<Trial> trials;
    for (int index : candidates) {
      PrimitiveDesc pd = index < 0 ? first : nth(desc, attr, index);
      Trial t{index, dnnl::convolution_forward(pd), {}, {}};
      auto bind = [&](int arg, const dnnl::memory::desc &md, int byte) {
        if (md.is_zero())
          return;
        t.memories.push_back(filled(md, byte));
        t.args[arg] = t.memories.back();
      };
      bind(DNNL_ARG_SRC, pd.src_desc(), 0x3c);
      bind(DNNL_ARG_WEIGHTS, pd.weights_desc(), 0x3c);
      bind(DNNL_ARG_BIAS, pd.bias_desc(), 0);
      bind(DNNL_ARG_DST, pd.dst_desc(), 0);
      bind(DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc(), 0);
      trials.push_back(std::move(t));
    }
    dnnl::stream stream(cpuEngine());
    for (int round = 0; round < kRounds; ++round)
      for (Trial &t : trials) {
        auto start = std::chrono::steady_clock::now();
        t.primitive.execute(stream, t.args);
        stream.wait();
        double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
        if (round > 0)
          t.bestMs = std::min(t.bestMs, ms);
      }
    const Trial *best = &trials.front();
    for (const Trial &t : trials)
      if (t.bestMs < best->bestMs)
        best = &t;
    // Within 3% of oneDNN's own first choice: its choice, so that noise on
    // a loaded machine changes fewer plans.
    if (best->index < 0 || best->bestMs > 0.97 * trials.front().bestMs) {
      remember(-1);
      return first;
    }
    remember(best->index);
    PrimitiveDesc chosen = nth(desc, attr, best->index);
    return chosen;
  } catch (const dnnl::error &) {
    return first;
  }
}

} // namespace gopt::runtime::cpu
