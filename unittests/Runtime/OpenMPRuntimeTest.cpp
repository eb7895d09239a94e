//===- OpenMPRuntimeTest.cpp - One OpenMP runtime for gopt and oneDNN -----===//
//
// gopt's kernels and oneDNN's must fork onto the same thread pool: were
// libdnnl.so's GOMP_parallel resolved to libgomp while gopt's went to
// libomp, the process would run two pools whose idle threads spin against
// each other for the same cores.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/CpuInfo.h"

#include <dirent.h>
#include <dnnl.hpp>
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

using namespace gopt::runtime;

namespace {

// The kernel's ids of this process's threads.
std::set<long> threadsInProcess() {
  std::set<long> ids;
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return ids;
  while (dirent *entry = readdir(dir))
    if (entry->d_name[0] != '.')
      ids.insert(std::atol(entry->d_name));
  closedir(dir);
  return ids;
}

// A oneDNN convolution large enough that oneDNN splits it among all threads.
void runOneDnnConvolution() {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc src({8, 32, 28, 28}, dt::f32, tag::nchw);
  dnnl::memory::desc weights({32, 32, 3, 3}, dt::f32, tag::oihw);
  dnnl::memory::desc dst({8, 32, 28, 28}, dt::f32, tag::nchw);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::convolution_direct, src,
                                       weights, dst, {1, 1}, {1, 1}, {1, 1});
  dnnl::convolution_forward::primitive_desc pd(desc, engine);
  std::vector<float> s(8 * 32 * 28 * 28, 1.0f), w(32 * 32 * 9, 0.5f),
      d(s.size(), 0.0f);
  dnnl::memory srcMem(src, engine, s.data()), wMem(weights, engine, w.data()),
      dstMem(dst, engine, d.data());
  dnnl::convolution_forward(pd).execute(stream, {{DNNL_ARG_SRC, srcMem},
                                                 {DNNL_ARG_WEIGHTS, wMem},
                                                 {DNNL_ARG_DST, dstMem}});
  stream.wait();
  // An interior output sums 3 x 3 x 32 products of 0.5.
  EXPECT_FLOAT_EQ(d[16 * 28 * 28 + 14 * 28 + 14], 144.0f);
}

TEST(OpenMPRuntime, GoptAndOneDnnShareOneThreadPool) {
  if (omp_get_num_procs() < 2)
    GTEST_SKIP() << "one CPU: no worker threads to count";
  omp_set_num_threads(2);
  const std::set<long> before = threadsInProcess();
  runOneDnnConvolution();
  long team[2] = {0, 0};
  int size = 0;
#pragma omp parallel num_threads(2)
  {
    team[omp_get_thread_num() % 2] = syscall(SYS_gettid);
#pragma omp single
    size = omp_get_num_threads();
  }
  runOneDnnConvolution();
  ASSERT_EQ(size, 2);
  // Every thread started since (by oneDNN's regions or gopt's) is a worker
  // of gopt's team: a second runtime would have started its own.
  for (long id : threadsInProcess())
    if (!before.count(id))
      EXPECT_TRUE(id == team[0] || id == team[1])
          << "thread " << id << " is no worker of gopt's pool ("
          << openMPRuntimeName() << ")";
}

TEST(OpenMPRuntime, NamesTheRuntimeThisBuildLinks) {
  const std::string name = openMPRuntimeName();
  EXPECT_EQ(name.rfind(GOPT_EXPECTED_OPENMP_RUNTIME ".so", 0), 0u) << name;
}

// Restores an environment variable when the test ends.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

TEST(OpenMPRuntime, DescribesHowIdleThreadsWait) {
  const std::string name = openMPRuntimeName();
  const bool libomp = name.rfind("libomp", 0) == 0;
  {
    ScopedEnv policy("OMP_WAIT_POLICY", "passive");
    ScopedEnv blocktime("KMP_BLOCKTIME", nullptr);
    EXPECT_EQ(openMPWaitBehaviour(), name + ": sleep at once");
  }
  {
    ScopedEnv policy("OMP_WAIT_POLICY", nullptr);
    ScopedEnv blocktime("KMP_BLOCKTIME", "5");
    EXPECT_EQ(openMPWaitBehaviour(),
              name + (libomp ? ": spin 5 ms, then sleep"
                             : ": a short spin, then sleep"));
  }
  if (libomp) {
    // KMP_BLOCKTIME overrides the policy's spin, as libomp reads them.
    ScopedEnv policy("OMP_WAIT_POLICY", "active");
    ScopedEnv blocktime("KMP_BLOCKTIME", "0");
    EXPECT_EQ(openMPWaitBehaviour(), name + ": sleep at once");
  }
}

} // namespace
