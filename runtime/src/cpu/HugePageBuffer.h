//===- HugePageBuffer.h - packed weights on transparent huge pages -*- C++
//-*-=//
//
// A kernel's packed constant weights that are streamed from memory on
// every run (a batch-1 dense layer's, SqueezeNet's 2 MiB classifier filter)
// read 10% faster from 2 MiB pages than from 4 KiB ones (a 5 MB matrix-
// vector product from DRAM, one core: 0.41 -> 0.37 ms): one TLB entry per
// 2 MiB instead of 512 page walks. Linux backs an anonymous range with huge
// pages where it is 2 MiB-aligned and madvise(MADV_HUGEPAGE) asks for it
// (transparent_hugepage "madvise", Debian's default). Buffers of at least
// 1 MiB are allocated so (rounded up to whole 2 MiB pages); smaller ones,
// and all with GOPT_HUGE_PAGE_WEIGHTS=0, on 64-byte boundaries.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_HUGEPAGEBUFFER_H
#define GOPT_RUNTIME_SRC_CPU_HUGEPAGEBUFFER_H

#include "EnvSwitch.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gopt::runtime::cpu {

class HugePageBuffer {
public:
  HugePageBuffer() = default;
  // `count` zeroed floats.
  explicit HugePageBuffer(size_t count) {
    constexpr size_t kHuge = size_t(2) << 20;
    size_t bytes = count * sizeof(float);
    size_t align = 64;
    const bool huge =
        bytes >= (size_t(1) << 20) && envSwitchOn("GOPT_HUGE_PAGE_WEIGHTS");
    if (huge)
      align = kHuge;
    bytes = (bytes + align - 1) / align * align;
    data_.reset(static_cast<float *>(std::aligned_alloc(align, bytes)));
    if (!data_)
      throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge)
      madvise(data_.get(), bytes, MADV_HUGEPAGE); // a hint: failure is fine
#endif
    std::memset(data_.get(), 0, bytes);
    size_ = count;
  }
  float *data() { return data_.get(); }
  const float *data() const { return data_.get(); }
  size_t size() const { return size_; }

private:
  struct Free {
    void operator()(float *p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  size_t size_ = 0;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_HUGEPAGEBUFFER_H
