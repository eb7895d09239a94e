//===- FakeData.cpp - Deterministic random inputs -------------------------===//
#include "gopt/Tooling/FakeData.h"

#include "gopt/runtime/LowPrecision.h"

#include <random>

namespace gopt::tooling {

using namespace runtime;

Tensor fakeData(const TensorDesc &desc, uint32_t seed) {
  Tensor t = Tensor::allocate(desc.dtype, desc.shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 9);
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (desc.dtype) {
    case DType::kF32:
      t.data<float>()[i] = real(rng);
      break;
    case DType::kF16:
      t.data<uint16_t>()[i] = floatToHalf(real(rng));
      break;
    case DType::kBF16:
      t.data<uint16_t>()[i] = floatToBf16(real(rng));
      break;
    case DType::kI8:
      t.data<int8_t>()[i] = static_cast<int8_t>(small(rng));
      break;
    case DType::kU8:
      t.data<uint8_t>()[i] = static_cast<uint8_t>(small(rng));
      break;
    case DType::kI32:
      t.data<int32_t>()[i] = small(rng);
      break;
    case DType::kI64:
      t.data<int64_t>()[i] = small(rng);
      break;
    case DType::kBool:
      t.data<bool>()[i] = small(rng) < 5;
      break;
    case DType::kF64:
      t.data<double>()[i] = real(rng);
      break;
    case DType::kI16:
      t.data<int16_t>()[i] = static_cast<int16_t>(small(rng));
      break;
    case DType::kU16:
      t.data<uint16_t>()[i] = static_cast<uint16_t>(small(rng));
      break;
    case DType::kU32:
      t.data<uint32_t>()[i] = static_cast<uint32_t>(small(rng));
      break;
    case DType::kU64:
      t.data<uint64_t>()[i] = static_cast<uint64_t>(small(rng));
      break;
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
      t.data<uint8_t>()[i] =
          lowPrecisionFromDouble(t.dtype(), real(rng), /*saturate=*/true);
      break;
    case DType::kI4:
    case DType::kU4:
      t.data<uint8_t>()[i] = lowPrecisionFromDouble(t.dtype(), small(rng),
                                                    /*saturate=*/true);
      break;
    case DType::kInvalid:
      break;
    }
  }
  return t;
}

} // namespace gopt::tooling
