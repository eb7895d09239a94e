//===- AmxMatmul.h - bf16 matmul of training-sized layers on AMX -*- C++
//-*-===//
//
// matmul of two 2-D bf16 operands (either transposed) on gopt's own AMX
// tiles: the MNIST CNN's 9216 -> 128 dense layer and its two gradients at
// batch 1024, where oneDNN 2.6's brgemm matmul ran at about a fifth of the
// speed gopt's AMX convolution reaches on the same core.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_AMXMATMUL_H
#define GOPT_RUNTIME_SRC_CPU_AMXMATMUL_H

#include "gopt/runtime/Kernel.h"

#include <memory>

namespace gopt::runtime::cpu {

// False when GOPT_AMX_MATMUL=0 (oneDNN runs them, for comparing).
bool amxMatmulEnabled();

// matmul(a, b) with transpose_a / transpose_b, a, b and the result bf16
// and 2-D, M, N and K multiples of 32, and the CPU (and the OS) giving
// AMX-BF16: f32 sums over all of K in the tiles, rounded once to bf16
// (to nearest even). Null elsewhere (the caller keeps oneDNN).
std::unique_ptr<Kernel> createAmxMatmul(const KernelConfig &c);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_AMXMATMUL_H
