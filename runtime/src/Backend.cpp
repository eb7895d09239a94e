//===- Backend.cpp - Creating a session's backend -------------------------===//
#include "Backend.h"
#include "cpu/CpuBackend.h"
#include "gopt/runtime/Kernel.h"
#ifdef GOPT_HAVE_CUDA_BACKEND
#include "cuda/CudaBackend.h"
#endif

#include <cstdint>
#include <unistd.h>

namespace gopt::runtime {

size_t sessionMemoryLimit(const SessionOptions &options) {
  if (options.memoryLimitBytes)
    return options.memoryLimitBytes;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    return static_cast<size_t>(pages) * static_cast<size_t>(pageSize);
  return SIZE_MAX;
}

StatusOr<std::unique_ptr<Backend>>
createBackend(const Plan &plan, const SessionOptions &options) {
#ifdef GOPT_HAVE_CUDA_BACKEND
  if (options.backend == "cuda")
    return createCudaBackend(plan, options);
#endif
  std::string whyNot;
  if (!isBackendAvailable(options.backend, &whyNot))
    return unimplemented(whyNot);
  return createCpuBackend(plan, options);
}

bool isBackendAvailable(const std::string &backend, std::string *whyNot) {
  if (backend == "cpu" || backend == "reference")
    return true;
  if (whyNot) {
    if (backend == "cuda")
      *whyNot = "CUDA backend not built (configure with "
                "-DGOPT_ENABLE_CUDA=ON where the CUDA toolkit is installed)";
    else
      *whyNot =
          "unknown backend '" + backend + "' (known: cpu, reference, cuda)";
  }
  return false;
}

} // namespace gopt::runtime
