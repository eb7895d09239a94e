//===- CudaCommon.h - Errors, handles and the device context ----*- C++ -*-===//
#ifndef GOPT_RUNTIME_SRC_CUDA_CUDACOMMON_H
#define GOPT_RUNTIME_SRC_CUDA_CUDACOMMON_H

#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime::cuda {

// The one place where library status codes become Status values:
// "<call>: <name> (<description>)". The session prefixes the op.
Status fromCuda(cudaError_t error, const char *call);
Status fromCudnn(cudnnStatus_t status, const char *call);
Status fromCublas(cublasStatus_t status, const char *call);

#define GOPT_CUDA_CHECK(expr)                                                  \
  GOPT_RETURN_IF_ERROR(::gopt::runtime::cuda::fromCuda((expr), #expr))
#define GOPT_CUDNN_CHECK(expr)                                                 \
  GOPT_RETURN_IF_ERROR(::gopt::runtime::cuda::fromCudnn((expr), #expr))
#define GOPT_CUBLAS_CHECK(expr)                                                \
  GOPT_RETURN_IF_ERROR(::gopt::runtime::cuda::fromCublas((expr), #expr))

// "no CUDA device: <reason>" when the process cannot use a GPU, else ok.
Status checkCudaDevice();

// Owned device memory (cudaFree on destruction).
struct DeviceBuffer {
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { reset(); }
  Status allocate(size_t bytes);
  void reset();
  void *data() const { return ptr; }
  void *ptr = nullptr;
  size_t bytes = 0;
};

// Owned pinned host memory (cudaFreeHost on destruction).
struct PinnedBuffer {
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  ~PinnedBuffer() { reset(); }
  Status allocate(size_t bytes);
  void reset();
  void *ptr = nullptr;
  size_t bytes = 0;
};

// Per-session state every kernel uses: the stream, library handles and a
// shared scratch buffer (valid during run(); grown at kernel creation).
struct DeviceContext {
  DeviceContext() = default;
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;
  ~DeviceContext();
  Status init();

  int device = 0;
  std::string deviceName;
  int multiProcessors = 0;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t cublasLt = nullptr;
  // TF32 tensor-core math for f32: GOPT_CUDA_TF32=0/1 sets both; by default
  // convolutions use it (as PyTorch's cuDNN default) and matmuls do not.
  bool tf32Conv = true;
  bool tf32Matmul = false;
  DeviceBuffer workspace;
  // Grows the shared workspace to at least `bytes` (call only outside
  // run(): kernels read workspace.ptr when they run).
  Status reserveWorkspace(size_t bytes);
};

// What a CUDA kernel is created from: the op at concrete shapes plus
// device pointers of constant operands (null for other operands).
struct CudaKernelConfig {
  const plan::Op *op = nullptr;
  std::vector<DType> inputTypes;
  std::vector<Shape> inputShapes;
  std::vector<DType> outputTypes;
  std::vector<Shape> outputShapes;
  std::vector<const void *> constantInputs; // device pointers or null
  DeviceContext *ctx = nullptr;
  // A device int that run() may set to report an error found on the device
  // (NaN in check_numerics, integer division by zero); see flagMessage().
  int *errorFlag = nullptr;
  // The session's communicator (all_reduce); null for a single replica.
  Communicator *communicator = nullptr;
  OpAttrs attrs() const { return OpAttrs(*op); }
};

class CudaKernel {
public:
  virtual ~CudaKernel() = default;
  // Enqueues the op on ctx->stream; pointers are device memory.
  virtual Status run(const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs) = 0;
  // "cudnn", "cublaslt" or "cuda" (gopt's own kernels): shown by --profile.
  virtual const char *implementation() const = 0;
  // Device memory the kernel holds (reordered filters, padded inputs).
  virtual size_t workspaceBytes() const { return 0; }
  // Whether run() leaves work on another stream (a collective on the
  // communication stream) that the session's stream must wait for, with
  // join(), before the first op that reads the results, and at the step's
  // end. join() enqueues that wait; it does not block the host. Also true
  // for a kernel that joins its own collectives within run()
  // (cross_replica batch norm): the host then waits for the step with the
  // communicator's timeout.
  virtual bool asynchronous() const { return false; }
  virtual Status join() { return Status::success(); }
  // The error for a nonzero error flag value.
  virtual std::string flagMessage(int flag) const {
    return "device error flag " + std::to_string(flag);
  }
};

// The CUDA kernel for `config`, or an error: "no CUDA kernel for 'KIND'
// ...; place it on the CPU" when the op (or its element type or
// attributes) has none.
StatusOr<std::unique_ptr<CudaKernel>>
createCudaKernel(const CudaKernelConfig &config);

// Creates the kernel of one op kind (CudaOps.cpp).
using CudaKernelHandler =
    StatusOr<std::unique_ptr<CudaKernel>> (*)(const CudaKernelConfig &config);

// The dispatch table: the rows of CudaOps.def bound to their handlers, by op
// kind. Its kinds are cudaOpKinds() (gopt/runtime/cuda/CudaSupport.h), which
// read the same rows.
const std::map<std::string, CudaKernelHandler> &cudaDispatchTable();

// The mean time of `runOnce` on the stream (two warm-up runs, then five).
template <typename Fn>
StatusOr<float> timeOnStream(cudaStream_t stream, Fn runOnce) {
  for (int i = 0; i < 2; ++i)
    GOPT_RETURN_IF_ERROR(runOnce());
  cudaEvent_t start = nullptr, stop = nullptr;
  GOPT_RETURN_IF_ERROR(fromCuda(cudaEventCreate(&start), "cudaEventCreate"));
  Status s = fromCuda(cudaEventCreate(&stop), "cudaEventCreate");
  float ms = 0;
  if (s.ok())
    s = fromCuda(cudaEventRecord(start, stream), "cudaEventRecord");
  constexpr int kRuns = 5;
  for (int i = 0; s.ok() && i < kRuns; ++i)
    s = runOnce();
  if (s.ok())
    s = fromCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
  if (s.ok())
    s = fromCuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
  if (s.ok())
    s = fromCuda(cudaEventElapsedTime(&ms, start, stop),
                 "cudaEventElapsedTime");
  cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  GOPT_RETURN_IF_ERROR(s);
  return ms / kRuns;
}

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_CUDACOMMON_H
