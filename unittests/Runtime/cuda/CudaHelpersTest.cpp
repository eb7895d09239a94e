//===- CudaHelpersTest.cpp - CUDA backend parts that need no GPU ----------===//
#include "AlgoCache.h"
#include "CublasLtLoader.h"
#include "CudaCommon.h"
#include "Launch.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/Session.h"
#include "gopt/runtime/UnaryMath.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace gopt::runtime::cuda {
namespace {

TEST(AlgoCache, ParseAndFormatRoundTrip) {
  std::map<std::string, AlgoChoice> entries = {
      {"NVIDIA H100|conv2d|f32|NCHW|8,3,224,224", {1, 2}},
      {"NVIDIA H100|conv2d|f16|NHWC|8,64,56,56", {6, 1}}};
  int malformed = -1;
  auto parsed = parseAlgoCache(formatAlgoCache(entries), &malformed);
  EXPECT_EQ(malformed, 0);
  EXPECT_EQ(parsed, entries);
}

TEST(AlgoCache, IgnoresCommentsAndMalformedLines) {
  std::string text = "# comment\n"
                     "\n"
                     "k1\t1\t0\n"
                     "k2\tx\t0\n" // algo not a number
                     "k3\t1\n"    // missing field
                     "k4\t1\t0\textra\n"
                     "\t1\t0\n"      // empty key
                     "k5\t-3\t0\n"   // negative algo
                     "k1\t7\t1\r\n"; // later line wins, CRLF tolerated
  int malformed = 0;
  auto parsed = parseAlgoCache(text, &malformed);
  EXPECT_EQ(malformed, 5);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed["k1"], (AlgoChoice{7, 1}));
}

TEST(AlgoCache, KeySanitizesSeparators) {
  std::string key = makeAlgoKey("GPU\tname\n", {"a|b", "c"});
  EXPECT_EQ(key, "GPU_name_|a_b|c");
  EXPECT_EQ(key.find('\t'), std::string::npos);
}

TEST(AlgoCache, FilePersistsAndMergesOtherWriters) {
  char dir[] = "/tmp/gopt-algo-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/sub/cudnn-algos.txt";
  {
    AlgoCache cache(path);
    AlgoChoice c;
    EXPECT_FALSE(cache.lookup("a", &c));
    EXPECT_TRUE(cache.insert("a", {3, 1}));
  }
  {
    // Another process adds "b" to the file meanwhile.
    std::ofstream out(path, std::ios::app);
    out << "b\t5\t0\n";
  }
  AlgoCache cache(path);
  AlgoChoice c;
  ASSERT_TRUE(cache.lookup("a", &c));
  EXPECT_EQ(c, (AlgoChoice{3, 1}));
  AlgoCache writer(path);
  ASSERT_TRUE(writer.lookup("a", &c));
  EXPECT_TRUE(writer.insert("c", {0, 0}));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto entries = parseAlgoCache(text.str());
  EXPECT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries["b"], (AlgoChoice{5, 0}));
}

TEST(AlgoCache, DefaultPathFromEnvironment) {
  setenv("GOPT_CUDNN_ALGO_CACHE", "/x/y.txt", 1);
  EXPECT_EQ(defaultAlgoCachePath(), "/x/y.txt");
  setenv("GOPT_CUDNN_ALGO_CACHE", "off", 1);
  EXPECT_EQ(defaultAlgoCachePath(), "");
  unsetenv("GOPT_CUDNN_ALGO_CACHE");
  setenv("XDG_CACHE_HOME", "/c", 1);
  EXPECT_EQ(defaultAlgoCachePath(), "/c/gopt/cudnn-algos.txt");
  unsetenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  std::string saved = home ? home : "";
  setenv("HOME", "/h", 1);
  EXPECT_EQ(defaultAlgoCachePath(), "/h/.cache/gopt/cudnn-algos.txt");
  if (home)
    setenv("HOME", saved.c_str(), 1);
}

TEST(Launch, GridBlocks) {
  EXPECT_EQ(gridBlocks(0), 1);
  EXPECT_EQ(gridBlocks(1), 1);
  EXPECT_EQ(gridBlocks(256), 1);
  EXPECT_EQ(gridBlocks(257), 2);
  EXPECT_EQ(gridBlocks(int64_t(1) << 40), kMaxBlocks);
  EXPECT_EQ(gridBlocks(1000, 128), 8);
}

// Naive offset of output element i of `in` broadcast into `out`.
int64_t naiveBroadcastOffset(const Shape &out, const Shape &in, int64_t i) {
  std::vector<int64_t> idx(out.size());
  for (int64_t d = out.size() - 1; d >= 0; --d) {
    idx[d] = i % out[d];
    i /= out[d];
  }
  std::vector<int64_t> strides = contiguousStrides(in);
  int64_t offset = 0, lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    offset += (in[d] == 1 ? 0 : idx[lead + d]) * strides[d];
  return offset;
}

TEST(Launch, BroadcastIndexMatchesNaive) {
  std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}},       {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 1}},
      {{2, 3, 4}, {2, 1, 4}},       {{2, 3, 4}, {}},  {{5, 1, 6}, {1, 1, 6}},
      {{2, 3, 4, 5}, {2, 1, 1, 5}}, {{7}, {1}}};
  for (const auto &[out, in] : cases) {
    auto index = broadcastIndex(out, in);
    ASSERT_TRUE(index.ok()) << index.status().toString();
    for (int64_t i = 0; i < numElements(out); ++i)
      ASSERT_EQ(stridedOffset(*index, i), naiveBroadcastOffset(out, in, i))
          << shapeToString(in) << " -> " << shapeToString(out) << " at " << i;
  }
}

TEST(Launch, MergesContiguousDims) {
  auto same = broadcastIndex({2, 3, 4}, {2, 3, 4});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->rank, 1);
  EXPECT_EQ(same->dims[0], 24);
  auto bias = broadcastIndex({8, 16, 16, 32}, {32});
  ASSERT_TRUE(bias.ok());
  EXPECT_EQ(bias->rank, 2); // [8*16*16] stride 0, [32] stride 1
  EXPECT_EQ(bias->strides[0], 0);
  EXPECT_EQ(bias->dims[1], 32);
}

TEST(Launch, BroadcastErrors) {
  EXPECT_FALSE(broadcastIndex({2, 3}, {4}).ok());
  EXPECT_FALSE(broadcastIndex({3}, {2, 3}).ok());
  // Nine alternating broadcast dims cannot merge.
  Shape out = {2, 2, 2, 2, 2, 2, 2, 2, 2}, in = {2, 1, 2, 1, 2, 1, 2, 1, 2};
  auto r = broadcastIndex(out, in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("at most"), std::string::npos);
}

TEST(Launch, TransposeIndexViaMakeIndex) {
  // [2,3,4] transposed by perm [2,0,1]: out[k][i][j] = in[i][j][k].
  Shape in = {2, 3, 4};
  std::vector<int64_t> s = contiguousStrides(in);
  auto index = makeIndex({4, 2, 3}, {s[2], s[0], s[1]});
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->rank, 2); // dims 0,1 of in merge: [4] x [6]
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t ij = 0; ij < 6; ++ij)
      EXPECT_EQ(stridedOffset(*index, k * 6 + ij), ij * 4 + k);
}

TEST(CudaSupport, EveryReferenceOpRunsOnCudaOrIsDocumentedCpuOnly) {
  std::set<std::string> cuda(cudaOpKinds().begin(), cudaOpKinds().end());
  // docs/cuda.md lists these as CPU-only; nothing else may be missing.
  // Training ops without CUDA kernels yet: training dropout's gradient and
  // draws, and dynamic loss scaling (docs/training.md).
  std::set<std::string> cpuOnly = {"dropout_grad", "random_uniform_like",
                                   "all_finite", "select", "loss_scale_update"};
  // The math family of GoptMathOps.td and prelu run on the CPU so far.
  cpuOnly.insert(std::begin(gopt::unary_math::kOpNames),
                 std::end(gopt::unary_math::kOpNames));
  cpuOnly.insert("prelu");
  // The normalizations (GoptNormOps.td), the reductions added after the
  // CUDA backend's and the logic ops (GoptLogicOps.td) run on the CPU so far.
  cpuOnly.insert(
      {"layer_norm", "instance_norm", "lrn", "reduce_min", "reduce_prod"});
  cpuOnly.insert({"equal",         "less",        "less_equal", "greater",
                  "greater_equal", "and",         "or",         "xor",
                  "not",           "where",       "mod",        "floor_div",
                  "is_nan",        "is_inf",      "expand",     "tile",
                  "bit_shift",     "bitwise_and", "bitwise_or", "bitwise_xor",
                  "bitwise_not"});
  // The image ops (GoptImageOps.td) run on the CPU so far.
  cpuOnly.insert({"conv2d_transpose", "resize", "resize_grad"});
  // The indexing ops (GoptIndexingOps.td) run on the CPU so far.
  cpuOnly.insert({"gather", "gather_grad", "gather_elements", "gather_nd",
                  "tf_idf_vectorizer", "scatter_elements", "scatter_nd",
                  "arg_max", "arg_min", "top_k", "cumsum"});
  // The 3-D window ops (GoptVolumeOps.td) run on the CPU so far.
  cpuOnly.insert({"conv3d", "conv3d_transpose", "max_pool3d", "avg_pool3d",
                  "conv3d_grad", "max_pool3d_grad", "avg_pool3d_grad"});
  // The sampling ops (GoptSamplingOps.td) and the signal ops
  // (GoptSignalOps.td) run on the CPU so far.
  cpuOnly.insert({"grid_sample", "roi_align", "grid_sample_grad",
                  "roi_align_grad", "max_roi_pool", "max_roi_pool_grad",
                  "max_pool_with_indices", "max_unpool", "col2im",
                  "deform_conv2d", "deform_conv2d_grad", "dft", "stft",
                  "mel_weight_matrix", "det", "matrix_inverse"});
  // The recurrent gradients (backpropagation through time, GoptRnnOps.td)
  // have reference kernels only.
  cpuOnly.insert({"lstm_grad", "gru_grad", "rnn_grad"});
  // dynamic_reshape (GoptDynamicShapeOps.td) runs on the CPU so far.
  cpuOnly.insert("dynamic_reshape");
  // Control flow (GoptControlFlowOps.td) runs its regions' sessions from the
  // host.
  cpuOnly.insert({"if", "loop"});
  // The dynamic ops run as their static ops; placement puts them on the CPU
  // (their values are read on the host), and range runs on the CPU so far.
  for (const OpSchema &schema : allOpSchemas())
    if (schema.staticKind)
      cpuOnly.insert(schema.kind);
  cpuOnly.insert("range");
  // Ops whose result shapes their data decides (GoptDataDependentOps.td)
  // run on the host between the pieces of the plan, on every backend.
  for (const OpSchema &schema : allOpSchemas())
    if (schema.dataDependentResultShapes)
      cpuOnly.insert(schema.kind);
  for (const OpSchema &schema : allOpSchemas()) {
    std::string kind = schema.kind;
    EXPECT_TRUE(cuda.count(kind) || cpuOnly.count(kind))
        << "'" << kind << "' has neither a CUDA kernel nor a CPU-only entry";
  }
  // Every entry is a runtime op kind that really lacks a CUDA kernel, so the
  // list cannot hide a stale name (e.g. `constant`, which the lowering turns
  // into plan tensors and no kernel ever runs).
  for (const std::string &kind : cpuOnly) {
    EXPECT_NE(findOpSchema(kind), nullptr)
        << "CPU-only entry '" << kind << "' is not a runtime op kind";
    EXPECT_EQ(cuda.count(kind), 0u)
        << "CPU-only entry '" << kind << "' has a CUDA kernel";
  }
  for (const std::string &kind : cuda)
    EXPECT_NE(findOpSchema(kind), nullptr) << kind;
}

TEST(CudaSupport, TrainingAndSyncBatchNormRunOnCudaTrainingDropoutDoesNot) {
  plan::Op bn;
  bn.set_kind("batch_norm");
  std::string why;
  EXPECT_TRUE(hasCudaKernel(bn, &why));
  (*bn.mutable_attrs())["training"] = boolAttr(true);
  EXPECT_TRUE(hasCudaKernel(bn, &why));
  plan::Op dropout;
  dropout.set_kind("dropout");
  EXPECT_TRUE(hasCudaKernel(dropout, &why));
  (*dropout.mutable_attrs())["training"] = boolAttr(true);
  EXPECT_FALSE(hasCudaKernel(dropout, &why));
  EXPECT_EQ(why, "training-mode dropout is CPU-only");
  // Synchronized batch norm sums its statistics over the session's NCCL
  // communicator (TrainingOps.cpp).
  for (const char *kind : {"batch_norm", "batch_norm_grad"}) {
    plan::Op synced;
    synced.set_kind(kind);
    (*synced.mutable_attrs())["training"] = boolAttr(true);
    (*synced.mutable_attrs())["cross_replica"] = boolAttr(true);
    EXPECT_TRUE(hasCudaKernel(synced, &why)) << kind << ": " << why;
  }
  plan::Op unknown;
  unknown.set_kind("fft");
  EXPECT_FALSE(hasCudaKernel(unknown, &why));
  EXPECT_NE(why.find("'fft'"), std::string::npos);
}

// The op kinds of the MNIST CNN's and ResNet-18's training steps (SGD with
// momentum and Adam, f32) all have CUDA kernels.
TEST(CudaSupport, TrainingStepOpsHaveCudaKernels) {
  for (const char *kind :
       {"adam_update", "avg_pool_grad", "batch_norm_grad",
        "conv2d_backprop_filter", "conv2d_backprop_input", "max_pool_grad",
        "mse_loss", "mse_loss_grad", "relu_grad", "sgd_update",
        "softmax_cross_entropy", "softmax_cross_entropy_grad"}) {
    plan::Op op;
    op.set_kind(kind);
    std::string why;
    EXPECT_TRUE(hasCudaKernel(op, &why)) << kind << ": " << why;
  }
}

// Kernels whose creation needs no device: the pooling gradients' window
// arithmetic reads max_pool_grad's undeclared `padding`/`ceil_mode` as the
// window ops' defaults (the first GPU run found "" rejected), and the
// training kernels refuse other element types than f32 by name.
cuda::CudaKernelConfig poolGradConfig(const plan::Op &op, DType type) {
  cuda::CudaKernelConfig c;
  c.op = &op;
  c.inputTypes = {type, type};
  c.inputShapes = {{1, 2, 5, 5}, {1, 2, 3, 3}};
  c.outputTypes = {type};
  c.outputShapes = {{1, 2, 5, 5}};
  return c;
}

TEST(CudaTrainingKernels, PoolGradientsAreCreatedWithoutADevice) {
  plan::Op maxGrad;
  maxGrad.set_kind("max_pool_grad");
  maxGrad.set_name("pool/grad");
  (*maxGrad.mutable_attrs())["kernel"] = intsAttr({2, 2});
  (*maxGrad.mutable_attrs())["strides"] = intsAttr({2, 2});
  (*maxGrad.mutable_attrs())["pads"] = intsAttr({0, 1, 0, 1});
  (*maxGrad.mutable_attrs())["data_format"] = stringAttr("NCHW");
  auto k = cuda::createCudaKernel(poolGradConfig(maxGrad, DType::kF32));
  EXPECT_TRUE(k.ok()) << k.status().toString();
  plan::Op avgGrad = maxGrad;
  avgGrad.set_kind("avg_pool_grad");
  (*avgGrad.mutable_attrs())["pads"] = intsAttr({0, 0, 0, 0});
  (*avgGrad.mutable_attrs())["ceil_mode"] = boolAttr(true);
  k = cuda::createCudaKernel(poolGradConfig(avgGrad, DType::kF32));
  EXPECT_TRUE(k.ok()) << k.status().toString();
  k = cuda::createCudaKernel(poolGradConfig(maxGrad, DType::kBF16));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("no CUDA kernel for 'pool/grad' "
                                      "(max_pool_grad): operand 0 is bf16"),
            std::string::npos)
      << k.status().message();
}

TEST(CudaSupport, QuantizationOpsHaveCudaKernels) {
  const std::vector<std::string> &kinds = cudaOpKinds();
  for (const char *kind : {"quantize", "dequantize"}) {
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kind;
    plan::Op op;
    op.set_kind(kind);
    (*op.mutable_attrs())["axis"] = intAttr(1);
    std::string why;
    EXPECT_TRUE(hasCudaKernel(op, &why)) << kind << ": " << why;
  }
}

// Creating a quantize/dequantize kernel only checks types, the axis and
// the scale count (no device call), so it is tested without a GPU.
struct QuantCase {
  const char *kind;
  DType values, scales, result;
  Shape shape, scalesShape;
  int64_t axis;
};

StatusOr<std::unique_ptr<CudaKernel>> createQuantization(const QuantCase &q,
                                                         plan::Op &op) {
  op.set_kind(q.kind);
  op.set_name(std::string(q.kind) + "_op");
  (*op.mutable_attrs())["axis"] = intAttr(q.axis);
  CudaKernelConfig config;
  config.op = &op;
  config.inputTypes = {q.values, q.scales};
  config.inputShapes = {q.shape, q.scalesShape};
  config.outputTypes = {q.result};
  config.outputShapes = {q.shape};
  config.constantInputs = {nullptr, nullptr};
  return createCudaKernel(config);
}

TEST(CudaQuantization, KernelsTakeF32ToI8AndI8ToF32) {
  const DType f32 = DType::kF32, i8 = DType::kI8;
  for (const QuantCase &q : std::vector<QuantCase>{
           {"quantize", f32, f32, i8, {2, 3, 4, 5}, {1}, 0},  // per tensor
           {"quantize", f32, f32, i8, {2, 3, 4, 5}, {2}, 0},  // axis 0
           {"quantize", f32, f32, i8, {2, 3, 4, 5}, {3}, 1},  // axis 1
           {"quantize", f32, f32, i8, {2, 3, 4, 5}, {5}, -1}, // last axis
           {"dequantize", i8, f32, f32, {2, 3, 4, 5}, {1}, 0},
           {"dequantize", i8, f32, f32, {2, 3, 4, 5}, {3}, 1},
           {"dequantize", i8, f32, f32, {8, 4}, {8}, 0},
           {"quantize", f32, f32, i8, {0, 3}, {3}, 1}, // empty
       }) {
    plan::Op op;
    auto k = createQuantization(q, op);
    ASSERT_TRUE(k.ok()) << q.kind << " " << shapeToString(q.shape) << ": "
                        << k.status().toString();
    EXPECT_STREQ((*k)->implementation(), "cuda");
  }
}

TEST(CudaQuantization, OtherElementTypesHaveNoKernel) {
  const DType f32 = DType::kF32, i8 = DType::kI8;
  for (const QuantCase &q : std::vector<QuantCase>{
           {"quantize", DType::kF16, f32, i8, {4, 3}, {1}, 0},
           {"quantize", DType::kBF16, f32, i8, {4, 3}, {1}, 0},
           {"quantize", f32, DType::kF16, i8, {4, 3}, {1}, 0},
           {"quantize", f32, f32, DType::kU8, {4, 3}, {1}, 0},
           {"dequantize", DType::kU8, f32, f32, {4, 3}, {1}, 0},
           {"dequantize", DType::kI32, f32, f32, {4, 3}, {1}, 0},
           {"dequantize", i8, f32, DType::kF16, {4, 3}, {1}, 0},
       }) {
    plan::Op op;
    auto k = createQuantization(q, op);
    ASSERT_FALSE(k.ok()) << q.kind;
    EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented);
    std::string expected = std::string("no CUDA kernel for '") + q.kind +
                           "_op' (" + q.kind + "): element types";
    EXPECT_NE(k.status().message().find(expected), std::string::npos)
        << k.status().message();
    EXPECT_NE(k.status().message().find("place it on the CPU"),
              std::string::npos);
  }
}

TEST(CudaQuantization, AxisAndScaleCountAreChecked) {
  const DType f32 = DType::kF32, i8 = DType::kI8;
  plan::Op op;
  auto wrongCount =
      createQuantization({"quantize", f32, f32, i8, {2, 3}, {2}, 1}, op);
  ASSERT_FALSE(wrongCount.ok());
  EXPECT_EQ(wrongCount.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrongCount.status().message().find("expects 3 scales or 1, got 2"),
            std::string::npos)
      << wrongCount.status().message();
  auto badAxis =
      createQuantization({"dequantize", i8, f32, f32, {2, 3}, {1}, 2}, op);
  ASSERT_FALSE(badAxis.ok());
  EXPECT_NE(badAxis.status().message().find("axis 2 out of range for rank 2"),
            std::string::npos)
      << badAxis.status().message();
}

TEST(CudaQuantization, BadScaleFlagNamesTheLowestIndex) {
  // The device sets the flag with atomicMax(kQuantizeBadScaleBase - c):
  // the lowest bad index gives the largest flag, always nonzero.
  EXPECT_EQ(quantizeBadScaleIndex(kQuantizeBadScaleBase), 0);
  EXPECT_EQ(quantizeBadScaleIndex(kQuantizeBadScaleBase - 7), 7);
  EXPECT_GT(kQuantizeBadScaleBase - 1, kQuantizeBadScaleBase - 7);
  EXPECT_GE(kQuantizeBadScaleBase - (kQuantizeBadScaleBase - 1), 1);
  plan::Op op;
  auto k = createQuantization(
      {"quantize", DType::kF32, DType::kF32, DType::kI8, {2, 3}, {3}, 1}, op);
  ASSERT_TRUE(k.ok()) << k.status().toString();
  std::string message = (*k)->flagMessage(kQuantizeBadScaleBase - 2);
  EXPECT_NE(message.find("quantize scale 2 is"), std::string::npos) << message;
  EXPECT_NE(message.find("expected a finite positive number"),
            std::string::npos)
      << message;
}

TEST(CudaSession, WithoutDeviceReportsNoCudaDevice) {
  if (checkCudaDevice().ok())
    GTEST_SKIP() << "a CUDA device is present (CudaKernelsTest covers it)";
  PlanBuilder b("tiny");
  int x = b.addInput("x", DType::kF32, {2, 2});
  int y = b.addOutput("y", DType::kF32, {2, 2});
  b.addOp("relu", "r", {x}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.backend = "cuda";
  auto session = Session::create(*plan, options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(session.status().message().rfind("no CUDA device: ", 0), 0u)
      << session.status().message();
  // One line: the reason is cudaGetErrorString's text.
  EXPECT_EQ(session.status().message().find('\n'), std::string::npos);
}

TEST(CudaErrors, StatusNamesTheCall) {
  Status s = fromCuda(cudaErrorInvalidValue, "cudaMemcpyAsync");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("cudaMemcpyAsync: cudaErrorInvalidValue"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(fromCuda(cudaErrorMemoryAllocation, "x").code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(fromCuda(cudaSuccess, "x").ok());
  Status d = fromCudnn(CUDNN_STATUS_NOT_SUPPORTED, "cudnnConvolutionForward");
  EXPECT_EQ(d.code(), StatusCode::kUnimplemented);
  EXPECT_NE(
      d.message().find("cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED"),
      std::string::npos)
      << d.message();
  Status b = fromCublas(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul");
  EXPECT_NE(b.message().find("cublasLtMatmul: CUBLAS_STATUS_INVALID_VALUE"),
            std::string::npos);
  EXPECT_TRUE(fromCublas(CUBLAS_STATUS_SUCCESS, "x").ok());
}

// cuBLASLt is opened when a device context starts, not at process start
// (its load costs half a second): before loadCublasLt the process has not
// loaded it and its entry points refuse; after, they reach the library,
// whose descriptor calls need no GPU.
TEST(CublasLtLoader, OpensTheLibraryOnlyWhenAsked) {
  std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  EXPECT_EQ(dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr)
      << soname << " was loaded before any CUDA session";
  cublasLtMatmulDesc_t desc = nullptr;
  EXPECT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            CUBLAS_STATUS_NOT_INITIALIZED);

  Status loaded = loadCublasLt();
  if (!loaded.ok())
    GTEST_SKIP() << loaded.message();
  void *handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr);
  if (handle)
    dlclose(handle);
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_NE(desc, nullptr);
  EXPECT_EQ(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 4, 8, 4),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
}

} // namespace
} // namespace gopt::runtime::cuda
