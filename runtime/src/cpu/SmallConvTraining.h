//===- SmallConvTraining.h - AMX gradients of small convolutions -*- C++
//-*-===//
//
// Kernels for the gradients of small bf16 NHWC convolutions (the MNIST
// CNN's 32->64 3x3 layer) that oneDNN 2.6 runs far from the AMX units'
// speed. The chunked pool + conv gradient step (TrainingKernels.cpp) uses
// them on each chunk; the factories return null for anything else, and the
// caller keeps oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SMALLCONVTRAINING_H
#define GOPT_RUNTIME_SRC_CPU_SMALLCONVTRAINING_H

#include "gopt/runtime/Kernel.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// False when GOPT_AMX_FILTER_GRAD=0 (oneDNN runs them, for comparing).
bool amxFilterGradEnabled();
// conv2d_backprop_filter(x, dy) of bf16 NHWC x and dy on AMX tiles, the
// result f32 or bf16 (rounded once from f32 sums), OIHW or HWIO: null
// unless stride 1, dilation 1, no padding, one group, input and output
// channels multiples of 32, and the CPU (and the OS) give AMX-BF16. Run by
// one thread (the chunked step gives each lane its own).
class AmxFilterGrad : public Kernel {
public:
  // Without run(), for sums over several calls (the chunked step's chunks):
  // reset() zeroes the f32 sums, accumulate() adds the gradient of n images
  // (x and dy batch-major, the config's shapes but for the batch) and
  // addInto() adds the sums to `sums` in the result's layout.
  virtual void reset() = 0;
  virtual void accumulate(const uint16_t *x, const uint16_t *dy, int64_t n) = 0;
  virtual void addInto(float *sums) const = 0;
  // accumulate() with dy given on AmxDataGrad's grid (`gridImage` values
  // an image, the rows `lead` rows down): its positions are those the
  // products run over, so dy is transposed in whole aligned blocks.
  virtual void accumulateFromGrid(const uint16_t *x, const uint16_t *grid,
                                  int64_t n, int64_t gridImage,
                                  int64_t lead) = 0;
};
std::unique_ptr<AmxFilterGrad>
createAmxFilterGrad(const KernelConfig &filterGrad);

// False when GOPT_AMX_DATA_GRAD=0.
bool amxDataGradEnabled();
// conv2d_backprop_input(dy, filter) under the same conditions, the result
// bf16 (rounded once from f32 sums over all taps and channels).
class AmxDataGrad : public Kernel {
public:
  // Without run(), for several calls with one filter (the chunked step's
  // chunks): setFilter() packs the filter (the config's layout), compute()
  // writes the gradient of n images.
  virtual void setFilter(const uint16_t *filter) = 0;
  virtual void compute(const uint16_t *dy, int64_t n, uint16_t *dx) = 0;
  // compute() from dy already on the grid the tiles read (the chunked
  // step's pool gradient writes it there, saving the copy): per image
  // gridImage() values, 64-byte aligned, dy row r at row gridLead() + r *
  // W (W the source's width) and zeros everywhere else.
  virtual int64_t gridImage() const = 0;
  virtual int64_t gridLead() const = 0;
  virtual void computeFromGrid(const uint16_t *grid, int64_t n,
                               uint16_t *dx) = 0;
};
std::unique_ptr<AmxDataGrad> createAmxDataGrad(const KernelConfig &dataGrad);

// False when GOPT_AMX_CONV_FORWARD=0 (oneDNN runs the convolution).
bool amxConvForwardEnabled();
// conv2d(x, filter[, bias]) with activation none or relu, x, the filter
// and the result bf16 NHWC, the bias f32 or bf16, under the same conditions
// as the gradients (the MNIST CNN's 32->64 layer, where oneDNN 2.6's bf16
// kernel reached about half the tiles' speed); f32 sums over all taps and
// channels, the bias and relu added in f32 and the result rounded once.
// Parallel over the images. Null elsewhere (the caller keeps oneDNN).
std::unique_ptr<Kernel> createAmxConvForward(const KernelConfig &conv);

// False when GOPT_POOL_WINNER_MASK=0 (the pool's gradient finds each
// window's winner in the conv's result again, for comparing).
bool poolWinnerMaskEnabled();
// A max_pool's winners per window as the fused conv + pool step records
// them for the pool's gradient (PoolGradBf16.h reads them): per image,
// pooled pixel (row-major) and 16 channels, kh * kw masks of 16 bits, bit
// i of mask t set where channel i's first maximum (a NaN winning, the last
// NaN) is tap t of the window (row-major) and that maximum is > 0 (the
// relu after the pool passes its gradient). 4 bits per pooled value of a
// 2x2 pool: 4.7 MB at the MNIST CNN's batch 1024 instead of re-reading
// the conv's 75 MB result.
struct PoolWinnerMasks {
  std::vector<uint16_t> bits;
  int64_t imageElements = 0; // uint16 masks per image
  bool record = false;       // a gradient step reads them
  bool skipResult = false;   // nothing reads the conv's result
};

// False when GOPT_AMX_CONV_POOL=0 (the pool runs as a step of its own).
bool amxConvPoolEnabled();

/// Whether the threads of the AMX conv (+ pool) forward claim a few images
/// at a time instead of a fixed share each (GOPT_CONV_IMAGE_CLAIMS=0).
bool convImageClaimsEnabled();
// The AMX convolution above followed by a max_pool of its result whose
// windows tile it from the top left (kernel = strides, unpadded, NHWC,
// bf16), the pool's result transposed to NCHW: inputs the conv's, outputs
// the conv's result (NHWC, as without the pool) and the pooled NCHW
// tensor. Each image is pooled from a copy of its result in the thread's
// cache (the separate pool step read the whole result back from memory:
// 75 MB per MNIST CNN step at batch 1024). Null where either does not
// apply.
//
// With `masks`, each window's winner is also recorded there (while the
// window is in registers) when `masks->record` is set, for the pool's
// gradient to scatter dy without reading the conv's result back; with
// `masks->skipResult` also set the conv's NHWC result is not written (the
// schedule sets it where nothing else reads it).
//
// With `sourceConv` (a one-channel conv2d producing the AMX conv's source,
// SingleChannelConvImages in SingleChannelConv.h), that conv runs in the
// step too, one image at a time into the thread's cache: inputs its
// operands and then the AMX conv's filter [and bias], outputs its result,
// the AMX conv's and the pooled tensor. Its result is still written for
// its other readers unless `source->skipResult` (the schedule sets it where
// every other reader recomputes it). Null where it does not apply.
struct SourceConvResult {
  bool skipResult = false;
};
std::unique_ptr<Kernel>
createAmxConvMaxPoolToNchw(const KernelConfig &conv, const KernelConfig &pool,
                           std::shared_ptr<PoolWinnerMasks> masks = nullptr,
                           const KernelConfig *sourceConv = nullptr,
                           std::shared_ptr<SourceConvResult> source = nullptr);

// False when GOPT_FIRST_CONV_RECOMPUTE=0: the MNIST CNN's first
// (one-channel) conv's result is then stored by its own step and read back
// by the next conv and the backward, instead of being recomputed from its
// 28x28 images where it is read.
bool firstConvRecomputeEnabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_SMALLCONVTRAINING_H
