//===- CudnnGraphConv.h - A convolution on cuDNN's graph API ----*- C++ -*-===//
//
// A 2-D forward convolution, with its bias add and relu when the op has
// them, built as one cuDNN operation graph; the engines cuDNN's heuristics
// propose are timed on the op's shape and the fastest is kept. The legacy
// API (cudnnFindConvolutionForwardAlgorithm) reaches only the algorithms it
// enumerates; the graph API reaches every engine of the library. On an
// H200 the legacy choice for two of ResNet-18's 3x3 layers at batch 32 ran
// at 11 and 20 TFLOP/s, the graph API's engines at 86 and 75 (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_CUDNNGRAPHCONV_H
#define GOPT_RUNTIME_SRC_CUDA_CUDNNGRAPHCONV_H

#include "CudaCommon.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gopt::runtime::cuda {

struct GraphConvShape {
  cudnnDataType_t dataType = CUDNN_DATA_FLOAT;
  bool nchw = true;                   // else NHWC data with a KRSC filter
  int64_t n = 0, c = 0, h = 0, w = 0; // the input, padding already applied
  int64_t k = 0, cPerGroup = 0, r = 0, s = 0;
  int64_t outH = 0, outW = 0;
  int64_t padH = 0, padW = 0, strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  bool bias = false; // y += bias[k]
  bool relu = false; // then y = max(y, 0)
};

// An owned cudnnBackendDescriptor_t.
class BackendDescriptor {
public:
  BackendDescriptor() = default;
  BackendDescriptor(const BackendDescriptor &) = delete;
  BackendDescriptor &operator=(const BackendDescriptor &) = delete;
  BackendDescriptor(BackendDescriptor &&o) noexcept : d(o.d) { o.d = nullptr; }
  BackendDescriptor &operator=(BackendDescriptor &&o) noexcept {
    std::swap(d, o.d);
    return *this;
  }
  ~BackendDescriptor();
  Status create(cudnnBackendDescriptorType_t type);
  cudnnBackendDescriptor_t d = nullptr;
};

class CudnnGraphConv {
public:
  // The graph's fastest engine on `shape`, timed on scratch buffers, or
  // null when no engine runs it. `allowTf32` admits f32 engines that round
  // the products' inputs to TF32. The choice is cached under `cacheKey`
  // (AlgoCache) with the cuDNN version, so later sessions build one plan.
  static StatusOr<std::unique_ptr<CudnnGraphConv>>
  create(DeviceContext *ctx, const GraphConvShape &shape, bool allowTf32,
         const std::string &cacheKey);
  CudnnGraphConv(const CudnnGraphConv &) = delete;
  CudnnGraphConv &operator=(const CudnnGraphConv &) = delete;

  // y = conv(x, w), plus the bias when fusesBias() and relu when
  // fusesRelu(), on the context's stream; `workspace` holds
  // workspaceBytes(). When the shape asks for an epilogue that no engine
  // fuses, the plan is of the convolution alone.
  Status run(const void *x, const void *w, const void *bias, void *y,
             void *workspace);
  size_t workspaceBytes() const { return workspace_; }
  bool fusesBias() const { return bias_; }
  bool fusesRelu() const { return relu_; }

private:
  CudnnGraphConv() = default;
  static StatusOr<std::unique_ptr<CudnnGraphConv>>
  search(DeviceContext *ctx, const GraphConvShape &shape, bool allowTf32,
         const std::string &cacheKey);
  DeviceContext *ctx_ = nullptr;
  bool bias_ = false, relu_ = false;
  // Every descriptor the plan refers to stays alive with it.
  std::vector<BackendDescriptor> parts_;
  BackendDescriptor plan_;
  size_t workspace_ = 0;
  // The variant pack of the last pointers (rebuilt when they change).
  BackendDescriptor pack_;
  const void *packPtrs_[5] = {};
};

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_CUDNNGRAPHCONV_H
