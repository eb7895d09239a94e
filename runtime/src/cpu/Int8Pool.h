//===- Int8Pool.h - Global average pooling of int8 tensors ------*- C++ -*-===//
//
// A static-int8 network's head: dequantize(q, scale) read only by a global
// average pooling (MobileNetV2's last 1x1 convolution's 32x1280x7x7
// result), as one pass that sums q's bytes per channel in int32 (exact)
// and scales the sums once, instead of the dequantize writing every value
// as f32 and the pooling reading them back.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_INT8POOL_H
#define GOPT_RUNTIME_CPU_INT8POOL_H

#include "OneDnn.h"

#include <memory>

namespace gopt::runtime::cpu {

// GOPT_INT8_GLOBAL_POOL is not "0".
bool int8GlobalPoolEnabled();

// The kernel reading `src` (an s8 or u8 [N, C, H, W] tensor in the plain
// NCHW or in NHWC layout) and writing the f32 [N, C, 1, 1] means of its
// values times `scale`: mean = float(sum) * (scale / (H * W)). Null for
// any other layout or where it is off.
std::unique_ptr<LayoutKernel>
createDequantizeGlobalAvgPool(const dnnl::memory::desc &src, float scale);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_CPU_INT8POOL_H
