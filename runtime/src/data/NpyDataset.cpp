//===- NpyDataset.cpp - .npy and fake datasets ----------------------------===//
#include "data/DataUtil.h"
#include "gopt/runtime/Npy.h"

#include <algorithm>

namespace gopt::runtime {
namespace {

class NpyDataset final : public Dataset {
public:
  NpyDataset(std::string inputsPath, Tensor inputs, std::vector<int64_t> labels,
             const NormalizeOptions &options)
      : inputsPath_(std::move(inputsPath)), inputs_(std::move(inputs)),
        labels_(std::move(labels)), options_(options),
        table_(data::makeU8Table(options)) {
    shape_.assign(inputs_.shape().begin() + 1, inputs_.shape().end());
    elements_ = numElements(shape_);
  }

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  const Shape &inputShape() const override { return shape_; }

  Status read(int64_t index, float *inputOut,
              int64_t *labelOut) const override {
    if (index < 0 || index >= size())
      return invalidArgument("example ", index, " is out of range for '",
                             inputsPath_, "' (", size(), " examples)");
    if (inputs_.dtype() == DType::kU8)
      data::convertU8(inputs_.data<uint8_t>() + index * elements_, elements_,
                      table_, inputOut);
    else
      data::normalizeF32(inputs_.data<float>() + index * elements_, elements_,
                         options_, inputOut);
    *labelOut = labels_[index];
    return Status::success();
  }

  std::string describe() const override {
    return detail::concat("npy '", inputsPath_, "': ", size(), " x ",
                          shapeToString(shape_));
  }

private:
  std::string inputsPath_;
  Tensor inputs_;
  std::vector<int64_t> labels_;
  NormalizeOptions options_;
  std::array<float, 256> table_;
  Shape shape_;
  int64_t elements_ = 0;
};

/// splitmix64's output function: a well-mixed 64-bit value of `x`, so example
/// values are a pure function of (example, element) and reads need no shared
/// generator state.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class FakeDataset final : public Dataset {
public:
  FakeDataset(Shape shape, int64_t numClasses, int64_t numExamples,
              int64_t distinctExamples)
      : shape_(std::move(shape)), numClasses_(numClasses),
        numExamples_(numExamples), distinct_(distinctExamples) {}

  int64_t size() const override { return numExamples_; }
  const Shape &inputShape() const override { return shape_; }
  Status read(int64_t index, float *inputOut,
              int64_t *labelOut) const override {
    if (index < 0 || index >= numExamples_)
      return invalidArgument("example ", index,
                             " is out of range for the fake dataset (",
                             numExamples_, " examples)");
    // Example `index` repeats example index % distinct: uniform [0, 1)
    // values (like scaled pixels) and a uniform label, both fixed.
    uint64_t example = static_cast<uint64_t>(index % distinct_);
    uint64_t base = mix64(kSeed ^ mix64(example));
    int64_t n = inputElements();
    for (int64_t i = 0; i < n; ++i)
      inputOut[i] =
          static_cast<float>(mix64(base + static_cast<uint64_t>(i)) >> 40) *
          (1.0f / 16777216.0f);
    *labelOut = static_cast<int64_t>(mix64(base ^ kLabelSalt) %
                                     static_cast<uint64_t>(numClasses_));
    return Status::success();
  }
  std::string describe() const override {
    return detail::concat("fake: ", numExamples_, " x ", shapeToString(shape_),
                          ", ", numClasses_, " classes (", distinct_,
                          " random examples, repeated)");
  }

private:
  static constexpr uint64_t kSeed = 0x676f7074ull;        // "gopt"
  static constexpr uint64_t kLabelSalt = 0x6c6162656cull; // "label"
  Shape shape_;
  int64_t numClasses_, numExamples_, distinct_;
};

} // namespace

StatusOr<std::shared_ptr<Dataset>>
openNpyDataset(const std::string &inputsPath, const std::string &labelsPath,
               const NormalizeOptions &options) {
  GOPT_RETURN_IF_ERROR(data::checkNormalize(options));
  GOPT_ASSIGN_OR_RETURN(Tensor inputs, readNpy(inputsPath));
  GOPT_ASSIGN_OR_RETURN(Tensor labels, readNpy(labelsPath));
  if (inputs.dtype() != DType::kF32 && inputs.dtype() != DType::kU8)
    return invalidArgument("'", inputsPath, "' holds ",
                           dtypeName(inputs.dtype()),
                           " inputs, expected f32 or u8");
  if (inputs.rank() < 1 || inputs.dim(0) <= 0)
    return invalidArgument("'", inputsPath, "' has shape ",
                           shapeToString(inputs.shape()),
                           ", expected [N, ...] with N > 0 examples");
  for (int64_t d : inputs.shape())
    if (d <= 0)
      return invalidArgument("'", inputsPath, "' has shape ",
                             shapeToString(inputs.shape()),
                             ", expected no dimension of 0");
  bool columnLabels = labels.rank() == 2 && labels.dim(1) == 1;
  if (labels.rank() != 1 && !columnLabels)
    return invalidArgument("'", labelsPath, "' has shape ",
                           shapeToString(labels.shape()),
                           ", expected labels [N] (or [N,1])");
  if (labels.dtype() != DType::kI32 && labels.dtype() != DType::kI64 &&
      labels.dtype() != DType::kU8)
    return invalidArgument("'", labelsPath, "' holds ",
                           dtypeName(labels.dtype()),
                           " labels, expected int32, int64 or uint8");
  if (labels.dim(0) != inputs.dim(0))
    return invalidArgument("'", inputsPath, "' has ", inputs.dim(0),
                           " examples but '", labelsPath, "' has ",
                           labels.dim(0), " labels; expected the same count");
  std::vector<int64_t> values(static_cast<size_t>(labels.dim(0)));
  for (size_t i = 0; i < values.size(); ++i) {
    switch (labels.dtype()) {
    case DType::kI32:
      values[i] = labels.data<int32_t>()[i];
      break;
    case DType::kI64:
      values[i] = labels.data<int64_t>()[i];
      break;
    default:
      values[i] = labels.data<uint8_t>()[i];
      break;
    }
    if (values[i] < 0)
      return invalidArgument("'", labelsPath, "': label ", values[i],
                             " of example ", i,
                             " is negative, expected a class index >= 0");
  }
  return std::shared_ptr<Dataset>(std::make_shared<NpyDataset>(
      inputsPath, std::move(inputs), std::move(values), options));
}

StatusOr<std::shared_ptr<Dataset>> openFakeDataset(const Shape &inputShape,
                                                   int64_t numClasses,
                                                   int64_t numExamples,
                                                   int64_t distinctExamples) {
  for (int64_t d : inputShape)
    if (d <= 0)
      return invalidArgument("fake dataset: input shape ",
                             shapeToString(inputShape),
                             " must have positive dimensions");
  if (numClasses < 1)
    return invalidArgument("fake dataset: numClasses must be >= 1, got ",
                           numClasses);
  if (numExamples < 1)
    return invalidArgument("fake dataset: numExamples must be >= 1, got ",
                           numExamples);
  if (distinctExamples < 1)
    return invalidArgument("fake dataset: distinctExamples must be >= 1, got ",
                           distinctExamples);
  return std::shared_ptr<Dataset>(
      std::make_shared<FakeDataset>(inputShape, numClasses, numExamples,
                                    std::min(distinctExamples, numExamples)));
}

} // namespace gopt::runtime
