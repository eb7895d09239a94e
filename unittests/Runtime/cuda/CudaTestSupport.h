//===- CudaTestSupport.h - What every CUDA kernel test shares ---*- C++ -*-===//
//
// The fixture that skips without a GPU ("no CUDA device (...)") and turns
// TF32 off (GOPT_CUDA_TF32=0) so that f32 kernels compare with the
// reference backend at f32 tolerances, and the elementwise comparison.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_UNITTESTS_RUNTIME_CUDA_CUDATESTSUPPORT_H
#define GOPT_UNITTESTS_RUNTIME_CUDA_CUDATESTSUPPORT_H

#include "CudaCommon.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdlib>

namespace gopt::runtime::testing {

class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    Status device = cuda::checkCudaDevice();
    if (!device.ok())
      GTEST_SKIP() << "no CUDA device (" << device.message() << ")";
    setenv("GOPT_CUDA_TF32", "0", 1);
  }
};

// |a - e| <= atol + rtol * |e| elementwise, NaN matching NaN; f16/bf16 and
// integers are compared as their values.
inline ::testing::AssertionResult allClose(const Tensor &actual,
                                           const Tensor &expected,
                                           double rtol = 1e-3,
                                           double atol = 1e-4) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure()
           << "shape/type " << shapeToString(actual.shape()) << " "
           << dtypeName(actual.dtype()) << " vs. "
           << shapeToString(expected.shape()) << " "
           << dtypeName(expected.dtype());
  auto value = [](const Tensor &t, int64_t i) -> double {
    switch (t.dtype()) {
    case DType::kF32:
      return t.data<float>()[i];
    case DType::kF16:
      return halfToFloat(t.data<uint16_t>()[i]);
    case DType::kBF16:
      return bf16ToFloat(t.data<uint16_t>()[i]);
    case DType::kI32:
      return t.data<int32_t>()[i];
    case DType::kI64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kI8:
      return t.data<int8_t>()[i];
    case DType::kU8:
    case DType::kBool:
      return t.data<uint8_t>()[i];
    default:
      return NAN;
    }
  };
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double a = value(actual, i), e = value(expected, i);
    if (std::isnan(e) && std::isnan(a))
      continue;
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e)))
      return ::testing::AssertionFailure()
             << "element " << i << ": cuda " << a << ", reference " << e;
  }
  return ::testing::AssertionSuccess();
}

} // namespace gopt::runtime::testing

#endif // GOPT_UNITTESTS_RUNTIME_CUDA_CUDATESTSUPPORT_H
