//===- CpuBackend.h - Thread count of the CPU kernels -----------*- C++ -*-===//
#ifndef GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H
#define GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H

namespace gopt::runtime {

// Sets the intra-op thread count of the CPU kernels: OpenMP's, which oneDNN
// uses. Defined in OneDnnKernels.cpp; the session calls it once at init.
void setCpuThreads(int threads);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H
