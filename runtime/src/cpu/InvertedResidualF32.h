//===- InvertedResidualF32.h - Fused MobileNet block, NHWC f32 --*- C++ -*-===//
//
// MobileNetV2's inverted residual block as one f32 kernel at batch 1:
// 1x1 expand (+bias, clamp) -> kxk depthwise (+bias, clamp) -> 1x1 project
// (+bias, + the destination's contents, clamp), one output row at a time,
// the expanded rows (a ring of k) and the depthwise row staying in L1/L2
// instead of going through memory between three kernels. The CPU schedule
// runs its batch-1 f32 convolution chains with it (InvertedResidualF32
// below); plain C++ with AVX-512F intrinsics and no oneDNN types in the
// kernel itself.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_INVERTEDRESIDUALF32_H
#define GOPT_RUNTIME_SRC_CPU_INVERTEDRESIDUALF32_H

#include "gopt/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

struct ConvChainStage;
class LayoutKernel;

// One image: source [h][w][cin], result [oh][ow][cout], NHWC.
struct InvertedResidualShape {
  int64_t h = 0, w = 0, cin = 0, hidden = 0, cout = 0;
  bool expand = true; // false: no expand stage (hidden == cin)
  int64_t k = 3;      // the depthwise window (k x k)
  int64_t stride = 1; // both dimensions
  int64_t padTop = 0, padLeft = 0;
  int64_t oh = 0, ow = 0;
  bool sum = false; // the result adds the destination's previous contents
};

// A convolution's bias and clamp (relu, relu6, clip); no clamp: lo = -inf,
// hi = +inf.
struct InvertedResidualStage {
  std::vector<float> weights; // expand [cin][hidden], depthwise [k*k][hidden],
                              // project [hidden][cout]
  std::vector<float> bias;    // empty: none
  float lo = -__builtin_inff(), hi = __builtin_inff();
};

// False where the CPU lacks AVX-512F or GOPT_INVERTED_RESIDUAL_F32=0.
bool invertedResidualF32Enabled();

// The expanded tensor (bytes, one image) above which the CPU schedule runs a
// batch-1 block as this kernel, for a core with `l2Bytes` of L2 (<= 0:
// unknown): smaller blocks stay in cache between oneDNN's kernels.
size_t invertedResidualMinBytes(long l2Bytes);

class InvertedResidualF32 {
public:
  // `expand` is ignored where !shape.expand. `threads`: the threads a call
  // splits the output rows among. Null for shapes it does not take.
  static std::unique_ptr<InvertedResidualF32>
  create(const InvertedResidualShape &shape,
         const InvertedResidualStage &expand,
         const InvertedResidualStage &depthwise,
         const InvertedResidualStage &project, int threads);
  // `dst` may be `src` (an in-place residual block: shape.sum, stride 1,
  // cin == cout).
  void run(const float *src, float *dst) const;
  size_t workspaceBytes() const;
  const InvertedResidualShape &shape() const { return s_; }

private:
  struct Workspace;
  void runRows(const float *src, float *dst, int64_t r0, int64_t r1, float *ws,
               bool inPlace, int thread) const;
  void runImage(const float *src, float *dst, float *image, float *ws, int t,
                int nt) const;
  void expandRows(const float *src, int64_t lo, int64_t hi, float *ring,
                  int64_t slots, int64_t slot0) const;

  InvertedResidualShape s_;
  int64_t hp_ = 0, cp_ = 0; // hidden and cout rounded up to 16
  int64_t bufW_ = 0;        // columns of an expanded row, with padding
  bool wholeImage_ = false; // threads split pixels, not rows (runImage)
  int64_t chunk_ = 1;       // output rows per project GEMM
  int64_t ring_ = 0;        // expanded rows a chunk reads
  int64_t slots_ = 0;       // ring_ and the halo rows
  std::vector<float> we_, be_, wd_, bd_, wp_, bp_;
  float elo_, ehi_, dlo_, dhi_, plo_, phi_;
  int threads_ = 1;
  size_t wsFloats_ = 0;      // one thread's workspace
  std::vector<float> zeros_; // a padded row of zeros (rows off the image)
};

// The chain `stages` (expand 1x1 -> depthwise -> project 1x1, or depthwise
// -> project 1x1) as one InvertedResidualF32, where all are f32 NCHW
// convolutions with constant weights at batch 1 that it takes; null
// otherwise. Inputs: the first's source in NHWC (and the accumulator of a
// sum); output: NHWC.
StatusOr<std::unique_ptr<LayoutKernel>>
createInvertedResidualF32(const std::vector<ConvChainStage> &stages);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_INVERTEDRESIDUALF32_H
