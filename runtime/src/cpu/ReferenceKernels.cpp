//===- ReferenceKernels.cpp - The reference kernel wrapper ----------------===//
#include "Reference.h"

#include <algorithm>
#include <cstring>

namespace gopt::runtime {
namespace ref {

std::vector<int64_t> rowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

SliceGather sliceGather(const OpAttrs &attrs, const Shape &input) {
  const int64_t rank = static_cast<int64_t>(input.size());
  std::vector<int64_t> starts = attrs.getInts("starts");
  std::vector<int64_t> steps = attrs.getInts("steps");
  std::vector<int64_t> inStrides = rowMajorStrides(input);
  SliceGather gather;
  gather.strides.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    // Starts are >= 0 (the shape function refuses others); past the end
    // means an empty slice going forward, the last element going backward.
    int64_t s = std::min(starts[d], steps[d] < 0 ? input[d] - 1 : input[d]);
    gather.base += s * inStrides[d];
    gather.strides[d] = steps[d] * inStrides[d];
  }
  return gather;
}

// The index into a numpy-broadcast operand of shape `operand` for element
// `i` of a row-major block of shape `target` (operand aligned at the end).
std::vector<int64_t> broadcastIndices(const Shape &operand,
                                      const Shape &target) {
  int64_t count = 1;
  for (int64_t d : target)
    count *= d;
  std::vector<int64_t> indices(count);
  std::vector<int64_t> stride(target.size(), 0);
  size_t offset = target.size() - operand.size();
  int64_t s = 1;
  for (size_t k = operand.size(); k-- > 0;) {
    stride[offset + k] = operand[k] == 1 ? 0 : s;
    s *= operand[k];
  }
  std::vector<int64_t> coord(target.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = 0;
    for (size_t k = 0; k < target.size(); ++k)
      index += coord[k] * stride[k];
    indices[i] = index;
    for (size_t k = target.size(); k-- > 0;) {
      if (++coord[k] < target[k])
        break;
      coord[k] = 0;
    }
  }
  return indices;
}

namespace {

bool isHalfType(DType t) { return t == DType::kF16 || t == DType::kBF16; }

Tensor toF32(const Tensor &t) {
  Tensor f = Tensor::allocate(DType::kF32, t.shape());
  float *dst = f.data<float>();
  int64_t n = t.numElements();
  if (t.dtype() == DType::kF64) {
    const double *src = t.data<double>();
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(src[i]);
    return f;
  }
  const uint16_t *src = t.data<uint16_t>();
  for (int64_t i = 0; i < n; ++i)
    dst[i] =
        t.dtype() == DType::kF16 ? halfToFloat(src[i]) : bf16ToFloat(src[i]);
  return f;
}

void fromF32(const Tensor &f, Tensor &t) {
  const float *src = f.data<float>();
  int64_t n = t.numElements();
  if (t.dtype() == DType::kF64) {
    double *dst = t.data<double>();
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i];
    return;
  }
  uint16_t *dst = t.data<uint16_t>();
  for (int64_t i = 0; i < n; ++i)
    dst[i] =
        t.dtype() == DType::kF16 ? floatToHalf(src[i]) : floatToBf16(src[i]);
}

// float8 and 4-bit values reach only kAny kernels (cast, data movement).
bool isIntegerType(DType t) {
  return !isFloatDType(t) && !isLowPrecisionDType(t) && t != DType::kInvalid;
}

bool takesIntegers(DTypeSupport s) {
  return s == DTypeSupport::kNumeric || s == DTypeSupport::kNumericF64;
}

bool takesF64(DTypeSupport s) {
  return s == DTypeSupport::kFloatF64 || s == DTypeSupport::kNumericF64;
}

class ReferenceKernel : public Kernel {
public:
  ReferenceKernel(const KernelConfig &config, RefFn fn, DTypeSupport support)
      : fn_(fn),
        support_(support), ctx_{config.op, config.seed, config.opIndex, 0},
        repeatRandomness_(config.repeatRandomness) {
    const OpSchema *schema = findOpSchema(config.op->kind());
    if (schema && schema->dataDependentResultShapes)
      ctx_.actualShapes = &actualShapes_;
    ctx_.communicator = config.communicator;
    ctx_.communicationQueue = config.communicationQueue;
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    Status status = runImpl(inputs, outputs);
    if (!repeatRandomness_)
      ctx_.calls++;
    return status;
  }
  const char *implementation() const override { return "reference"; }
  const std::vector<Shape> *actualResultShapes() const override {
    return ctx_.actualShapes;
  }

private:
  Status runImpl(const std::vector<Tensor> &inputs,
                 std::vector<Tensor> &outputs) {
    if (support_ == DTypeSupport::kAny)
      return fn_(ctx_, inputs, outputs);
    // Types the function does not compute in natively go through f32.
    auto viaF32 = [&](DType t) {
      return isHalfType(t) || (t == DType::kF64 && !takesF64(support_));
    };
    bool convert = false;
    for (const std::vector<Tensor> *list :
         {&inputs, const_cast<const std::vector<Tensor> *>(&outputs)})
      for (const Tensor &t : *list) {
        if (viaF32(t.dtype())) {
          convert = true;
        } else if (t.dtype() != DType::kF32 && t.dtype() != DType::kF64 &&
                   !(takesIntegers(support_) && isIntegerType(t.dtype()))) {
          return unimplemented("element type ", dtypeName(t.dtype()),
                               " is not supported by the reference kernel");
        }
      }
    if (!convert)
      return fn_(ctx_, inputs, outputs);
    std::vector<Tensor> ins, outs;
    for (const Tensor &t : inputs)
      ins.push_back(viaF32(t.dtype()) ? toF32(t) : t);
    for (const Tensor &t : outputs)
      outs.push_back(
          viaF32(t.dtype()) ? Tensor::allocate(DType::kF32, t.shape()) : t);
    GOPT_RETURN_IF_ERROR(fn_(ctx_, ins, outs));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (viaF32(outputs[i].dtype()))
        fromF32(outs[i], outputs[i]);
    return Status::success();
  }

  RefFn fn_;
  DTypeSupport support_;
  RefContext ctx_;
  bool repeatRandomness_;
  std::vector<Shape> actualShapes_;
};

} // namespace

void registerKernel(KernelRegistry &registry, const char *kind, RefFn fn,
                    DTypeSupport support) {
  registry.registerKernel(
      kind, "reference",
      [fn, support](
          const KernelConfig &config) -> StatusOr<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(
            std::make_unique<ReferenceKernel>(config, fn, support));
      });
}

} // namespace ref

void registerReferenceKernels(KernelRegistry &registry) {
  ref::registerElementwiseKernels(registry);
  ref::registerImageKernels(registry);
  ref::registerIndexingKernels(registry);
  ref::registerNNKernels(registry);
  ref::registerNormKernels(registry);
  ref::registerRnnKernels(registry);
  ref::registerVolumeKernels(registry);
  ref::registerSamplingKernels(registry);
  ref::registerSignalKernels(registry);
  ref::registerShapeKernels(registry);
  ref::registerTrainingKernels(registry);
  ref::registerUnaryMathKernels(registry);
  ref::registerLogicKernels(registry);
  ref::registerDynamicShapeKernels(registry);
  ref::registerControlFlowKernels(registry);
  ref::registerDataDependentKernels(registry);
  ref::registerCollectiveKernels(registry);
}

} // namespace gopt::runtime
