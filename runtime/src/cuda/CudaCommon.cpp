//===- CudaCommon.cpp - Errors, handles and the device context ------------===//
#include "CudaCommon.h"
#include "CublasLtLoader.h"

#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cuda {

Status fromCuda(cudaError_t error, const char *call) {
  if (error == cudaSuccess)
    return Status::success();
  // Clear a sticky-free error so that later calls do not report it again.
  (void)cudaGetLastError();
  StatusCode code = error == cudaErrorMemoryAllocation
                        ? StatusCode::kResourceExhausted
                        : StatusCode::kInternal;
  return Status(code, detail::concat(call, ": ", cudaGetErrorName(error), " (",
                                     cudaGetErrorString(error), ")"));
}

Status fromCudnn(cudnnStatus_t status, const char *call) {
  if (status == CUDNN_STATUS_SUCCESS)
    return Status::success();
  StatusCode code =
      status == CUDNN_STATUS_NOT_SUPPORTED  ? StatusCode::kUnimplemented
      : status == CUDNN_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                                            : StatusCode::kInternal;
  char detailText[512] = {0};
  cudnnGetLastErrorString(detailText, sizeof(detailText));
  std::string message = detail::concat(call, ": ", cudnnGetErrorString(status));
  if (detailText[0])
    message += std::string(" (") + detailText + ")";
  return Status(code, message);
}

static const char *cublasName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}

Status fromCublas(cublasStatus_t status, const char *call) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  StatusCode code =
      status == CUBLAS_STATUS_NOT_SUPPORTED  ? StatusCode::kUnimplemented
      : status == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                                             : StatusCode::kInternal;
  return Status(code, detail::concat(call, ": ", cublasName(status), " (",
                                     static_cast<int>(status), ")"));
}

Status checkCudaDevice() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return failedPrecondition("no CUDA device: ", cudaGetErrorString(error));
  }
  if (count == 0)
    return failedPrecondition("no CUDA device: ",
                              cudaGetErrorString(cudaErrorNoDevice));
  return Status::success();
}

Status DeviceBuffer::allocate(size_t n) {
  reset();
  if (n == 0)
    return Status::success();
  cudaError_t error = cudaMalloc(&ptr, n);
  if (error != cudaSuccess) {
    ptr = nullptr;
    return fromCuda(error, detail::concat("cudaMalloc(", n, " bytes)").c_str());
  }
  bytes = n;
  return Status::success();
}

void DeviceBuffer::reset() {
  if (ptr)
    cudaFree(ptr);
  ptr = nullptr;
  bytes = 0;
}

Status PinnedBuffer::allocate(size_t n) {
  reset();
  if (n == 0)
    return Status::success();
  cudaError_t error = cudaMallocHost(&ptr, n);
  if (error != cudaSuccess) {
    ptr = nullptr;
    return fromCuda(error,
                    detail::concat("cudaMallocHost(", n, " bytes)").c_str());
  }
  bytes = n;
  return Status::success();
}

void PinnedBuffer::reset() {
  if (ptr)
    cudaFreeHost(ptr);
  ptr = nullptr;
  bytes = 0;
}

static int envFlag(const char *name, int dflt) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return dflt;
  return std::strcmp(v, "0") != 0;
}

Status DeviceContext::init() {
  GOPT_RETURN_IF_ERROR(checkCudaDevice());
  GOPT_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  GOPT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  deviceName = prop.name;
  multiProcessors = prop.multiProcessorCount;
  GOPT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GOPT_CUDNN_CHECK(cudnnCreate(&cudnn));
  GOPT_CUDNN_CHECK(cudnnSetStream(cudnn, stream));
  GOPT_RETURN_IF_ERROR(loadCublasLt());
  GOPT_CUBLAS_CHECK(cublasLtCreate(&cublasLt));
  int tf32 = envFlag("GOPT_CUDA_TF32", -1);
  if (tf32 >= 0)
    tf32Conv = tf32Matmul = tf32 != 0;
  return Status::success();
}

DeviceContext::~DeviceContext() {
  workspace.reset();
  if (cublasLt)
    cublasLtDestroy(cublasLt);
  if (cudnn)
    cudnnDestroy(cudnn);
  if (stream)
    cudaStreamDestroy(stream);
}

Status DeviceContext::reserveWorkspace(size_t n) {
  if (n <= workspace.bytes)
    return Status::success();
  // Work already enqueued (a probe, a filter reorder) may still use it.
  GOPT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return workspace.allocate(n);
}

} // namespace gopt::runtime::cuda
