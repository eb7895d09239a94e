//===- CpuInfo.h - What backend "cpu" computes natively ---------*- C++ -*-===//
//
// Tools ask this before running a bf16 plan (mixed precision) or an int8
// plan on backend "cpu" and tell the user when it will not be fast.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPUINFO_H
#define GOPT_RUNTIME_CPUINFO_H

#include <string>

namespace gopt::runtime {

// How backend "cpu" computes bf16 convolutions, matmuls, pooling and batch
// norms on this CPU, as oneDNN sees it (DNNL_MAX_CPU_ISA included).
enum class Bf16Support {
  kNative,    // AVX512-BF16 or AMX instructions: faster than f32
  kEmulated,  // AVX-512 without bf16 instructions: oneDNN emulates them,
              // slower than f32
  kReference, // no AVX-512: oneDNN has no bf16 kernels, the reference
              // kernels run (far slower than f32)
};
Bf16Support cpuBf16Support();

// Whether oneDNN's int8 convolutions and matmuls accumulate exactly here:
// with VNNI (AVX2-VNNI, AVX512-VNNI) or AMX they sum u8*s8 products in s32.
// Without, their AVX2/AVX-512 kernels add pairs of products in saturating
// s16 (vpmaddubsw), which clips sums of large weights, so backend "cpu"
// runs static int8 convs and matmuls as f32 ops on the dequantized values.
bool cpuInt8DotProduct();

// oneDNN's name for the instruction set its kernels use, e.g.
// "avx512_core_bf16" or "avx2".
std::string cpuIsaName();

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPUINFO_H
