//===- CublasLtLoader.cpp - cuBLASLt's entry points, opened lazily --------===//
//
// The definitions below have the names and signatures of cublasLt.h's
// declarations (the compiler checks them against the header), so the call
// sites stay plain cuBLASLt calls and the link needs no libcublasLt.
//
//===----------------------------------------------------------------------===//
#include "CublasLtLoader.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <string>

namespace gopt::runtime::cuda {
namespace {

#define GOPT_CUBLASLT_ENTRY_POINTS(X)                                          \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)

struct CublasLtLibrary {
#define GOPT_CUBLASLT_POINTER(name) decltype(&::name) name = nullptr;
  GOPT_CUBLASLT_ENTRY_POINTS(GOPT_CUBLASLT_POINTER)
#undef GOPT_CUBLASLT_POINTER
  std::string error; // empty once every entry point resolved

  CublasLtLibrary() {
    // The soname of the toolkit gopt was built with; LD_LIBRARY_PATH finds
    // a GPU machine's own copy (its PyTorch environment's, for one).
    std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    void *handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      error = "the CUDA backend needs cuBLASLt (" + soname +
              "), which did not load: " + (why ? why : "unknown reason");
      return;
    }
#define GOPT_CUBLASLT_RESOLVE(name)                                            \
  if (error.empty()) {                                                         \
    name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));          \
    if (!name)                                                                 \
      error = soname + " has no " #name " (another cuBLASLt version?)";        \
  }
    GOPT_CUBLASLT_ENTRY_POINTS(GOPT_CUBLASLT_RESOLVE)
#undef GOPT_CUBLASLT_RESOLVE
  }
};

// Resolved entry points only after loadCublasLt succeeded, so that a call
// before it fails with a status instead of jumping through a null pointer.
const CublasLtLibrary *loaded = nullptr;

const CublasLtLibrary &library() {
  static const CublasLtLibrary instance; // thread-safe, once per process
  return instance;
}

} // namespace

Status loadCublasLt() {
  const CublasLtLibrary &lib = library();
  if (!lib.error.empty())
    return Status(StatusCode::kFailedPrecondition, lib.error);
  __atomic_store_n(&loaded, &lib, __ATOMIC_RELEASE);
  return Status::success();
}

} // namespace gopt::runtime::cuda

using gopt::runtime::cuda::loaded;

static const gopt::runtime::cuda::CublasLtLibrary *loadedLibrary() {
  return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

#define GOPT_CUBLASLT_FORWARD(name, ...)                                       \
  (loadedLibrary() ? loadedLibrary()->name(__VA_ARGS__)                        \
                   : CUBLAS_STATUS_NOT_INITIALIZED)

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t *lightHandle) {
  return GOPT_CUBLASLT_FORWARD(cublasLtCreate, lightHandle);
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle) {
  return GOPT_CUBLASLT_FORWARD(cublasLtDestroy, lightHandle);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
    const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
    const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
    const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
    void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmul, lightHandle, computeDesc, alpha,
                               A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                               algo, workspace, workspaceSizeInBytes, stream);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
    int *returnAlgoCount) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic, lightHandle,
                               operationDesc, Adesc, Bdesc, Cdesc, Ddesc,
                               preference, requestedAlgoCount,
                               heuristicResultsArray, returnAlgoCount);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(
    cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
    cudaDataType_t scaleType) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulDescCreate, matmulDesc,
                               computeType, scaleType);
}

cublasStatus_t CUBLASWINAPI
cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, matmulDesc);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(
    cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
    const void *buf, size_t sizeInBytes) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute, matmulDesc, attr,
                               buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, pref);
}

cublasStatus_t CUBLASWINAPI
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
    const void *buf, size_t sizeInBytes) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute, pref, attr,
                               buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI
cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
                           uint64_t rows, uint64_t cols, int64_t ld) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate, matLayout, type,
                               rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI
cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, matLayout);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
    const void *buf, size_t sizeInBytes) {
  return GOPT_CUBLASLT_FORWARD(cublasLtMatrixLayoutSetAttribute, matLayout,
                               attr, buf, sizeInBytes);
}

} // extern "C"
