//===- ChunkedMatmul.cpp - f32 matmul in L2-sized column chunks -----------===//

#include "ChunkedMatmul.h"

#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {

namespace {

using dnnl::memory;
using Dims = memory::dims;
using DataType = memory::data_type;

int64_t envInt(const char *name, int64_t fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long long parsed = std::strtoll(v, &end, 10);
  return end && *end == '\0' && parsed >= 0 ? parsed : fallback;
}

bool isReference(const dnnl::primitive_desc_base &pd) {
  const char *impl = nullptr;
  dnnl_primitive_desc_query(pd.get(), dnnl_query_impl_info_str, 0, &impl);
  return !impl || std::strncmp(impl, "ref", 3) == 0;
}

class ChunkedMatmulKernel : public LayoutKernel {
public:
  Status init(const KernelConfig &c, const MatmulPostOps &post,
              int64_t chunkColumns, bool &supported) {
    const Shape &aShape = c.inputShapes[0];
    k_ = aShape.back();
    rows_ = k_ ? numElements(aShape) / k_ : 0;
    const bool transposeB = c.attrs().getBool("transpose_b");
    n_ = c.outputShapes[0].back();
    const float *b = static_cast<const float *>(c.constantInputs[1]);
    bias_ = post.bias;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops postOps;
    if (post.sum)
      postOps.append_sum(1.0f);
    for (const ConvPostOps::Eltwise &e : post.eltwise)
      postOps.append_eltwise(1.0f, e.algorithm, e.alpha, e.beta);
    attr.set_post_ops(postOps);
    dnnl::stream stream(cpuEngine());
    size_t scratch = 0;
    try {
      for (int64_t n0 = 0; n0 < n_; n0 += chunkColumns) {
        int64_t w = std::min(chunkColumns, n_ - n0);
        Chunk chunk;
        chunk.n0 = n0;
        memory::desc aMd({rows_, k_}, DataType::f32, Dims{k_, 1});
        // B's columns [n0, n0 + w), read in place from the constant.
        memory::desc userB({k_, w}, DataType::f32,
                           transposeB ? Dims{1, k_} : Dims{n_, 1});
        memory::desc anyB({k_, w}, DataType::f32, memory::format_tag::any);
        memory::desc biasMd({1, w}, DataType::f32, Dims{w, 1});
        // The chunk's columns of the row-major result: rows n_ apart.
        memory::desc cMd({rows_, w}, DataType::f32, Dims{n_, 1});
        dnnl::matmul::primitive_desc pd =
            bias_ ? dnnl::matmul::primitive_desc(
                        dnnl::matmul::desc(aMd, anyB, biasMd, cMd), attr,
                        cpuEngine())
                  : dnnl::matmul::primitive_desc(
                        dnnl::matmul::desc(aMd, anyB, cMd), attr, cpuEngine());
        if (isReference(pd))
          return Status::success();
        chunk.primitive = dnnl::matmul(pd);
        chunk.a = memory(aMd, cpuEngine(), DNNL_MEMORY_NONE);
        chunk.c = memory(cMd, cpuEngine(), DNNL_MEMORY_NONE);
        if (bias_)
          chunk.bias = memory(biasMd, cpuEngine(), DNNL_MEMORY_NONE);
        chunk.weights = memory(pd.weights_desc(), cpuEngine());
        workspace_ += pd.weights_desc().get_size();
        memory source(userB, cpuEngine(),
                      const_cast<float *>(transposeB ? b + n0 * k_ : b + n0));
        dnnl::reorder(source, chunk.weights)
            .execute(stream, source, chunk.weights);
        stream.wait();
        scratch = std::max(scratch, pd.scratchpad_desc().get_size());
        chunks_.push_back(std::move(chunk));
      }
      scratchpad_ = memory(
          memory::desc({static_cast<int64_t>(scratch)}, DataType::u8, Dims{1}),
          cpuEngine());
      workspace_ += scratch;
      stream_ = dnnl::stream(cpuEngine());
    } catch (const dnnl::error &) {
      return Status::success(); // no kernel for these chunks: run as one
    }
    inputDesc_ = plainDesc(c.inputShapes[0], c.inputTypes[0]);
    outputDesc_ = plainDesc(c.outputShapes[0], c.outputTypes[0]);
    supported = true;
    return Status::success();
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    try {
      float *a = const_cast<float *>(inputs[0].data<float>());
      float *c = outputs[0].data<float>();
      float *bias =
          bias_ ? const_cast<float *>(inputs[2].data<float>()) : nullptr;
      for (Chunk &chunk : chunks_) {
        chunk.a.set_data_handle(a);
        chunk.c.set_data_handle(c + chunk.n0);
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC, chunk.a},
            {DNNL_ARG_WEIGHTS, chunk.weights},
            {DNNL_ARG_DST, chunk.c},
            {DNNL_ARG_SCRATCHPAD, scratchpad_}};
        if (bias_) {
          chunk.bias.set_data_handle(bias + chunk.n0);
          args[DNNL_ARG_BIAS] = chunk.bias;
        }
        chunk.primitive.execute(stream_, args);
      }
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN chunked matmul: ", e.what());
    }
    return Status::success();
  }
  const char *implementation() const override { return "onednn-chunked"; }
  size_t workspaceBytes() const override { return workspace_; }
  memory::desc inputDesc(int) const override { return inputDesc_; }
  memory::desc outputDesc() const override { return outputDesc_; }

private:
  struct Chunk {
    int64_t n0 = 0;
    dnnl::primitive primitive;
    memory a, weights, bias, c;
  };
  int64_t rows_ = 0, k_ = 0, n_ = 0;
  bool bias_ = false;
  std::vector<Chunk> chunks_;
  memory scratchpad_;
  dnnl::stream stream_;
  size_t workspace_ = 0;
  memory::desc inputDesc_, outputDesc_;
};

} // namespace

int64_t matmulChunkColumns(int64_t rows, int64_t k, int64_t n,
                           int64_t budgetBytes, int64_t maxRows) {
  if (budgetBytes <= 0 || rows < 16 || rows > maxRows || k <= 0 || n <= 0)
    return 0;
  const int64_t bBytes = k * n * static_cast<int64_t>(sizeof(float));
  if (bBytes * 2 <= budgetBytes * 3)
    return 0;
  // A is read once per chunk: it must stay in L2 beside the chunk.
  if (rows * k * static_cast<int64_t>(sizeof(float)) > budgetBytes)
    return 0;
  int64_t width = budgetBytes / (k * static_cast<int64_t>(sizeof(float)));
  width = std::max<int64_t>(64, width / 16 * 16);
  if (width >= n)
    return 0;
  // Equal chunks, each whole 16-column blocks.
  int64_t count = (n + width - 1) / width;
  int64_t balanced = ((n + count - 1) / count + 15) / 16 * 16;
  return balanced >= n ? 0 : balanced;
}

int64_t matmulChunkBudgetBytes() {
  static const int64_t bytes = envInt("GOPT_MATMUL_CHUNK_KIB", 1024) * 1024;
  return bytes;
}

int64_t matmulChunkMaxRows() {
  static const int64_t rows = envInt("GOPT_MATMUL_CHUNK_MAX_ROWS", 256);
  return rows;
}

StatusOr<std::unique_ptr<LayoutKernel>>
createChunkedMatmul(const KernelConfig &c, const MatmulPostOps &post,
                    int64_t chunkColumns) {
  if (chunkColumns <= 0 || c.inputShapes.size() < 2 ||
      c.constantInputs.size() < 2 || !c.constantInputs[1] ||
      !c.allOfType(DType::kF32) || c.inputShapes[1].size() != 2 ||
      c.inputShapes[0].empty() || c.attrs().getBool("transpose_a"))
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::make_unique<ChunkedMatmulKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, post, chunkColumns, supported));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createChunkedMatmul(const KernelConfig &c, const MatmulPostOps &post) {
  if (c.inputShapes.size() < 2 || c.inputShapes[0].empty() ||
      c.inputShapes[1].size() != 2 || c.outputShapes.empty() ||
      c.outputShapes[0].empty())
    return std::unique_ptr<LayoutKernel>();
  int64_t k = c.inputShapes[0].back();
  int64_t rows = k ? numElements(c.inputShapes[0]) / k : 0;
  return createChunkedMatmul(
      c, post,
      matmulChunkColumns(rows, k, c.outputShapes[0].back(),
                         matmulChunkBudgetBytes(), matmulChunkMaxRows()));
}

} // namespace gopt::runtime::cpu
