//===- MemoryPlanner.h - Arena offsets from tensor lifetimes ----*- C++ -*-===//
#ifndef GOPT_RUNTIME_MEMORYPLANNER_H
#define GOPT_RUNTIME_MEMORYPLANNER_H

#include <cstddef>
#include <vector>

namespace gopt::runtime {

// A tensor is live from the step that defines it to its last use, inclusive.
struct Lifetime {
  int firstUse = 0;
  int lastUse = 0;
};

struct ArenaPlan {
  std::vector<size_t> offsets; // one per tensor, multiples of `alignment`
  size_t arenaBytes = 0;
};

// Places every tensor in one arena so that tensors with overlapping
// lifetimes never overlap in memory. Greedy by decreasing size; each tensor
// takes the smallest gap (best fit) between tensors already placed that are
// live at the same time, else goes above them. The arena never exceeds the
// sum of the aligned sizes.
ArenaPlan planArena(const std::vector<size_t> &sizes,
                    const std::vector<Lifetime> &lifetimes,
                    size_t alignment = 64);

inline size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_MEMORYPLANNER_H
