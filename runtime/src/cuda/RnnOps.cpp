//===- RnnOps.cpp - lstm, gru and rnn on cuDNN's RNN API ------------------===//
//
// One cuDNN RNN (one layer, double bias, inference mode) per op. ONNX's gate
// blocks are copied into cuDNN's weight space with the gate permutation
// (lstm i, o, f, c -> cuDNN i, f, c, o; gru z, r, h -> cuDNN r, z, h): once
// at creation for constant operands, else every run. cuDNN has no
// reverse-only direction: "reverse" runs forward on the time-reversed input
// and reverses y back. cuDNN's y is [S, B, D*H]; bidirectional y is
// transposed into ONNX's [S, D, B, H]. Rank-0 operands (one value broadcast,
// how the importer passes an absent ONNX input) are expanded on the device.
//
//===----------------------------------------------------------------------===//
#include "RnnOps.h"
#include "Kernels.h"
#include "OpHelpers.h"

#include "gopt/runtime/OpAttrs.h"

#include <climits>
#include <string>
#include <vector>

namespace gopt::runtime::cuda {
namespace {

using KernelOr = StatusOr<std::unique_ptr<CudaKernel>>;

enum class Cell { kLstm, kGru, kRnn };

int64_t elementCount(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// A rank-1 index: `count` elements `stride` apart (0: one value repeated).
StridedIndex linearIndex(int64_t count, int64_t stride) {
  StridedIndex index;
  index.rank = 1;
  index.dims[0] = count;
  index.strides[0] = stride;
  return index;
}

struct RnnDescriptor {
  cudnnRNNDescriptor_t d = nullptr;
  RnnDescriptor() { cudnnCreateRNNDescriptor(&d); }
  ~RnnDescriptor() { cudnnDestroyRNNDescriptor(d); }
};
struct DropoutDescriptor {
  cudnnDropoutDescriptor_t d = nullptr;
  DropoutDescriptor() { cudnnCreateDropoutDescriptor(&d); }
  ~DropoutDescriptor() { cudnnDestroyDropoutDescriptor(d); }
};
struct RnnDataDescriptor {
  cudnnRNNDataDescriptor_t d = nullptr;
  RnnDataDescriptor() { cudnnCreateRNNDataDescriptor(&d); }
  ~RnnDataDescriptor() { cudnnDestroyRNNDataDescriptor(d); }
};
struct TensorDescriptor {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDescriptor() { cudnnCreateTensorDescriptor(&d); }
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(d); }
};

// One ONNX gate block (a matrix or a bias) copied into cuDNN's weight space.
struct BlockCopy {
  int operand = 0;    // 1 (w), 2 (r) or 3 (b)
  int64_t base = 0;   // element offset in the operand
  int64_t stride = 1; // 0 for a rank-0 operand
  int64_t count = 0;
  void *destination = nullptr;
};

// A [D, B, H] state operand that may be rank-0 (expanded into `expanded`).
struct StateOperand {
  int operand = -1;
  bool broadcast = false;
  bool constant = false;
  DeviceBuffer expanded;
};

class RecurrentKernel : public CudaKernel {
public:
  static KernelOr create(const CudaKernelConfig &c, Cell cell);
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override { return "cudnn"; }
  size_t workspaceBytes() const override {
    return weightSpace_.bytes + seqLengths_.bytes + reversedX_.bytes +
           cudnnY_.bytes + h0_.expanded.bytes + c0_.expanded.bytes;
  }

private:
  Status copyBlock(const BlockCopy &copy, const void *operand);
  Status expandState(StateOperand &state, const void *operand);

  DeviceContext *ctx_ = nullptr;
  Cell cell_ = Cell::kRnn;
  int64_t steps_ = 0, batch_ = 0, inputSize_ = 0, hidden_ = 0, directions_ = 1;
  bool reverse_ = false;
  DropoutDescriptor dropout_; // probability 0: one layer has none anyway
  RnnDescriptor rnn_;
  RnnDataDescriptor xDesc_, yDesc_;
  TensorDescriptor stateDesc_;
  DeviceBuffer seqLengths_, weightSpace_;
  size_t workBytes_ = 0;
  std::vector<BlockCopy> runCopies_; // blocks of non-constant operands
  StateOperand h0_, c0_;
  DeviceBuffer reversedX_, cudnnY_;
};

Status RecurrentKernel::copyBlock(const BlockCopy &copy, const void *operand) {
  return fromCuda(launchGather(sizeof(float), operand, copy.base,
                               linearIndex(copy.count, copy.stride),
                               copy.destination, copy.count, ctx_->stream),
                  "launchGather (recurrent weights)");
}

Status RecurrentKernel::expandState(StateOperand &state, const void *operand) {
  int64_t count = directions_ * batch_ * hidden_;
  return fromCuda(launchGather(sizeof(float), operand, 0, linearIndex(count, 0),
                               state.expanded.ptr, count, ctx_->stream),
                  "launchGather (initial state)");
}

KernelOr RecurrentKernel::create(const CudaKernelConfig &c, Cell cell) {
  const bool lstm = cell == Cell::kLstm;
  const size_t floatOperands = lstm ? 7 : 5;
  for (size_t i = 0; i < floatOperands && i < c.inputTypes.size(); ++i)
    if (c.inputTypes[i] != DType::kF32)
      return noKernel(c, detail::concat("element type ",
                                        dtypeName(c.inputTypes[i]),
                                        " (f32 only)"));
  for (DType t : c.outputTypes)
    if (t != DType::kF32)
      return noKernel(
          c, detail::concat("element type ", dtypeName(t), " (f32 only)"));
  if (c.inputShapes.size() < floatOperands ||
      c.outputShapes.size() != (lstm ? 3u : 2u))
    return internalError(c.op->kind(), " with ", c.inputShapes.size(),
                         " operands and ", c.outputShapes.size(), " results");

  OpAttrs attrs = c.attrs();
  auto k = std::make_unique<RecurrentKernel>();
  k->ctx_ = c.ctx;
  k->cell_ = cell;
  const std::string direction = attrs.getString("direction");
  k->directions_ = direction == "bidirectional" ? 2 : 1;
  k->reverse_ = direction == "reverse";
  const Shape &xs = c.inputShapes[0];
  if (xs.size() != 3)
    return internalError("x of shape ", shapeToString(xs), ", expected rank 3");
  k->steps_ = xs[0];
  k->batch_ = xs[1];
  k->inputSize_ = xs[2];
  k->hidden_ = attrs.getInt("hidden_size");
  const int64_t S = k->steps_, B = k->batch_, I = k->inputSize_;
  const int64_t H = k->hidden_, D = k->directions_;
  const int64_t G = lstm ? 4 : cell == Cell::kGru ? 3 : 1;
  if (S == 0 || B == 0 || I == 0 || H == 0)
    return noKernel(c, "empty sequence, batch, input or hidden size");
  if (!fitsInt(S) || !fitsInt(B) || !fitsInt(I) || !fitsInt(H) ||
      !fitsInt(S * B * D * H) || !fitsInt(S * B * I))
    return noKernel(c, "sizes too large for cuDNN");

  // The operands' element counts (shape inference checked the shapes; this
  // guards the copies below against reading past an operand).
  auto expectCount = [&](int operand, int64_t count,
                         bool mayBeScalar) -> Status {
    const Shape &s = c.inputShapes[operand];
    if (elementCount(s) == count || (mayBeScalar && s.empty()))
      return Status::success();
    return internalError(c.op->kind(), " operand ", operand, " of shape ",
                         shapeToString(s), ", expected ", count, " elements");
  };
  GOPT_RETURN_IF_ERROR(expectCount(1, D * G * H * I, false));
  GOPT_RETURN_IF_ERROR(expectCount(2, D * G * H * H, false));
  GOPT_RETURN_IF_ERROR(expectCount(3, D * 2 * G * H, true));
  GOPT_RETURN_IF_ERROR(expectCount(4, D * B * H, true));
  if (lstm) {
    GOPT_RETURN_IF_ERROR(expectCount(5, D * B * H, true));
    GOPT_RETURN_IF_ERROR(expectCount(6, D * 3 * H, true));
    // cuDNN's LSTM has no peepholes: only all-zero constant ones (the
    // importer's 0 for an absent P) are accepted.
    if (!c.constantInputs[6])
      return noKernel(c, "peepholes (p) that are not constants; cuDNN's LSTM "
                         "has no peepholes");
    std::vector<float> peepholes(elementCount(c.inputShapes[6]));
    GOPT_CUDA_CHECK(cudaStreamSynchronize(c.ctx->stream));
    GOPT_CUDA_CHECK(cudaMemcpy(peepholes.data(), c.constantInputs[6],
                               peepholes.size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
    for (float v : peepholes)
      if (v != 0.0f)
        return noKernel(c, "nonzero peepholes (p); cuDNN's LSTM has no "
                           "peepholes");
  }

  cudnnRNNMode_t mode = lstm                 ? CUDNN_LSTM
                        : cell == Cell::kGru ? CUDNN_GRU
                                             : CUDNN_RNN_TANH;
  // As conv2d: TF32 tensor cores only when the context allows them, else
  // plain f32 FMA math (GOPT_CUDA_TF32=0 gives f32-exact results).
  cudnnMathType_t math = c.ctx->tf32Conv ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  GOPT_CUDNN_CHECK(cudnnSetDropoutDescriptor(k->dropout_.d, c.ctx->cudnn, 0.0f,
                                             nullptr, 0, 0));
  GOPT_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
      k->rnn_.d, CUDNN_RNN_ALGO_STANDARD, mode, CUDNN_RNN_DOUBLE_BIAS,
      D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
      CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, math, int32_t(I), int32_t(H),
      int32_t(H), 1, k->dropout_.d, CUDNN_RNN_PADDED_IO_DISABLED));

  // Every sequence has all S steps (sequence_lens is refused by the
  // predicate), so the packed sequence-major layout is x's [S, B, I].
  std::vector<int> lengths(B, int(S));
  GOPT_CUDNN_CHECK(cudnnSetRNNDataDescriptor(
      k->xDesc_.d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
      int(S), int(B), int(I), lengths.data(), nullptr));
  GOPT_CUDNN_CHECK(cudnnSetRNNDataDescriptor(
      k->yDesc_.d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
      int(S), int(B), int(D * H), lengths.data(), nullptr));
  int stateDims[3] = {int(D), int(B), int(H)};
  int stateStrides[3] = {int(B * H), int(H), 1};
  GOPT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(k->stateDesc_.d, CUDNN_DATA_FLOAT,
                                              3, stateDims, stateStrides));
  GOPT_RETURN_IF_ERROR(k->seqLengths_.allocate(B * sizeof(int32_t)));
  GOPT_CUDA_CHECK(cudaMemcpy(k->seqLengths_.ptr, lengths.data(),
                             B * sizeof(int32_t), cudaMemcpyHostToDevice));

  size_t weightBytes = 0, reserveBytes = 0;
  GOPT_CUDNN_CHECK(
      cudnnGetRNNWeightSpaceSize(c.ctx->cudnn, k->rnn_.d, &weightBytes));
  GOPT_RETURN_IF_ERROR(k->weightSpace_.allocate(weightBytes));
  GOPT_CUDA_CHECK(
      cudaMemsetAsync(k->weightSpace_.ptr, 0, weightBytes, c.ctx->stream));
  GOPT_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(
      c.ctx->cudnn, k->rnn_.d, CUDNN_FWD_MODE_INFERENCE, k->xDesc_.d,
      &k->workBytes_, &reserveBytes));

  // cuDNN's linLayerIDs: gates 0..G-1 multiply x, G..2G-1 the hidden state,
  // in cuDNN's gate order; cudnnGate[g] is the ONNX block of cuDNN gate g.
  static const int64_t kLstmBlocks[4] = {0, 2, 3, 1}; // i, f, c, o
  static const int64_t kGruBlocks[3] = {1, 0, 2};     // r, z, h
  static const int64_t kRnnBlocks[1] = {0};
  const int64_t *onnxBlock = lstm                 ? kLstmBlocks
                             : cell == Cell::kGru ? kGruBlocks
                                                  : kRnnBlocks;
  const bool scalarBias = c.inputShapes[3].empty();
  std::vector<BlockCopy> copies;
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t id = 0; id < 2 * G; ++id) {
      TensorDescriptor matrixDesc, biasDesc;
      void *matrix = nullptr, *bias = nullptr;
      GOPT_CUDNN_CHECK(cudnnGetRNNWeightParams(
          c.ctx->cudnn, k->rnn_.d, int32_t(d), weightBytes, k->weightSpace_.ptr,
          int32_t(id), matrixDesc.d, &matrix, biasDesc.d, &bias));
      const bool recurrent = id >= G;
      const int64_t block = onnxBlock[id % G];
      const int64_t columns = recurrent ? H : I;
      // cuDNN's matrix is [H, columns] row-major, as ONNX's block: check
      // its size before copying into it.
      for (auto [desc, expected] :
           {std::pair{matrixDesc.d, H * columns}, std::pair{biasDesc.d, H}}) {
        cudnnDataType_t type;
        int rank = 0, dims[4] = {}, strides[4] = {};
        GOPT_CUDNN_CHECK(
            cudnnGetTensorNdDescriptor(desc, 4, &type, &rank, dims, strides));
        int64_t count = 1;
        for (int i = 0; i < rank; ++i)
          count *= dims[i];
        if (count != expected)
          return internalError("cuDNN's ", c.op->kind(), " weight ", id,
                               " of layer ", d, " has ", count,
                               " elements, expected ", expected);
      }
      if (!matrix || !bias)
        return internalError("cuDNN placed no weight ", id, " of layer ", d);
      BlockCopy m;
      m.operand = recurrent ? 2 : 1;
      m.base = (d * G + block) * H * columns;
      m.count = H * columns;
      m.destination = matrix;
      copies.push_back(m);
      BlockCopy b;
      b.operand = 3;
      b.base = scalarBias ? 0 : (d * 2 * G + (recurrent ? G : 0) + block) * H;
      b.stride = scalarBias ? 0 : 1;
      b.count = H;
      b.destination = bias;
      copies.push_back(b);
    }
  }
  for (const BlockCopy &copy : copies) {
    if (const void *constant = c.constantInputs[copy.operand])
      GOPT_RETURN_IF_ERROR(k->copyBlock(copy, constant));
    else
      k->runCopies_.push_back(copy);
  }

  // Initial states: full [D, B, H] operands are passed as they are.
  std::vector<StateOperand *> states = {&k->h0_};
  k->h0_.operand = 4;
  if (lstm) {
    k->c0_.operand = 5;
    states.push_back(&k->c0_);
  }
  for (StateOperand *state : states) {
    state->broadcast = c.inputShapes[state->operand].empty();
    if (!state->broadcast)
      continue;
    GOPT_RETURN_IF_ERROR(state->expanded.allocate(D * B * H * sizeof(float)));
    if (const void *constant = c.constantInputs[state->operand]) {
      state->constant = true;
      GOPT_RETURN_IF_ERROR(k->expandState(*state, constant));
    }
  }
  if (k->reverse_)
    GOPT_RETURN_IF_ERROR(k->reversedX_.allocate(S * B * I * sizeof(float)));
  if (k->reverse_ || D == 2)
    GOPT_RETURN_IF_ERROR(k->cudnnY_.allocate(S * B * D * H * sizeof(float)));
  GOPT_RETURN_IF_ERROR(c.ctx->reserveWorkspace(k->workBytes_));
  return std::unique_ptr<CudaKernel>(std::move(k));
}

Status RecurrentKernel::run(const std::vector<const void *> &in,
                            const std::vector<void *> &out) {
  cudaStream_t stream = ctx_->stream;
  for (const BlockCopy &copy : runCopies_)
    GOPT_RETURN_IF_ERROR(copyBlock(copy, in[copy.operand]));
  auto stateInput = [&](StateOperand &state) -> StatusOr<const void *> {
    if (!state.broadcast)
      return in[state.operand];
    if (!state.constant)
      GOPT_RETURN_IF_ERROR(expandState(state, in[state.operand]));
    return static_cast<const void *>(state.expanded.ptr);
  };
  GOPT_ASSIGN_OR_RETURN(const void *hx, stateInput(h0_));
  const void *cx = nullptr;
  if (cell_ == Cell::kLstm) {
    GOPT_ASSIGN_OR_RETURN(cx, stateInput(c0_));
  }
  const int64_t S = steps_, B = batch_, H = hidden_, D = directions_;
  // Time reversal: element (s, j) of [S, row] from (S - 1 - s, j).
  auto reverseIndex = [&](int64_t row) {
    StridedIndex index;
    index.rank = 2;
    index.dims[0] = S;
    index.dims[1] = row;
    index.strides[0] = -row;
    index.strides[1] = 1;
    return index;
  };
  const void *x = in[0];
  if (reverse_) {
    int64_t row = B * inputSize_;
    GOPT_CUDA_CHECK(launchGather(sizeof(float), in[0], (S - 1) * row,
                                 reverseIndex(row), reversedX_.ptr, S * row,
                                 stream));
    x = reversedX_.ptr;
  }
  void *y = cudnnY_.ptr ? cudnnY_.ptr : out[0];
  const bool lstm = cell_ == Cell::kLstm;
  GOPT_CUDNN_CHECK(cudnnRNNForward(
      ctx_->cudnn, rnn_.d, CUDNN_FWD_MODE_INFERENCE,
      static_cast<const int32_t *>(seqLengths_.ptr), xDesc_.d, x, yDesc_.d, y,
      stateDesc_.d, hx, out[1], stateDesc_.d, cx, lstm ? out[2] : nullptr,
      weightSpace_.bytes, weightSpace_.ptr, workBytes_,
      workBytes_ ? ctx_->workspace.ptr : nullptr, 0, nullptr));
  if (reverse_) {
    int64_t row = B * H;
    GOPT_CUDA_CHECK(launchGather(sizeof(float), cudnnY_.ptr, (S - 1) * row,
                                 reverseIndex(row), out[0], S * row, stream));
  } else if (D == 2) {
    // cuDNN's [S, B, 2, H] into ONNX's [S, 2, B, H].
    StridedIndex index;
    index.rank = 4;
    int64_t dims[4] = {S, 2, B, H}, strides[4] = {2 * B * H, H, 2 * H, 1};
    for (int i = 0; i < 4; ++i) {
      index.dims[i] = dims[i];
      index.strides[i] = strides[i];
    }
    GOPT_CUDA_CHECK(launchGather(sizeof(float), cudnnY_.ptr, 0, index, out[0],
                                 S * 2 * B * H, stream));
  }
  return Status::success();
}

} // namespace

StatusOr<std::unique_ptr<CudaKernel>> createGru(const CudaKernelConfig &c) {
  return RecurrentKernel::create(c, Cell::kGru);
}

StatusOr<std::unique_ptr<CudaKernel>> createLstm(const CudaKernelConfig &c) {
  return RecurrentKernel::create(c, Cell::kLstm);
}

StatusOr<std::unique_ptr<CudaKernel>> createRnn(const CudaKernelConfig &c) {
  return RecurrentKernel::create(c, Cell::kRnn);
}

} // namespace gopt::runtime::cuda
