//===- AlignedVector.h - std::vector on 64-byte boundaries ------*- C++ -*-===//
//
// A std::vector whose storage starts on a cache line: gopt's int8 kernels
// read their packed weights, scales and biases as whole 64-byte vectors
// (AMX B-tile rows, VPDPBUSD operands), and std::vector's 16-byte-aligned
// storage split every one of those reads across two cache lines (up to 10%
// of a kernel's time, and a different figure for each allocation).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ALIGNEDVECTOR_H
#define GOPT_RUNTIME_SRC_CPU_ALIGNEDVECTOR_H

#include <cstddef>
#include <new>
#include <vector>

namespace gopt::runtime::cpu {

template <typename T> struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(std::size_t n) {
    return static_cast<T *>(
        ::operator new(n * sizeof(T), std::align_val_t(64)));
  }
  void deallocate(T *p, std::size_t) {
    ::operator delete(p, std::align_val_t(64));
  }
  template <typename U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ALIGNEDVECTOR_H
