//===- MemoryPlanner.cpp - Arena offsets from tensor lifetimes ------------===//
#include "gopt/runtime/MemoryPlanner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace gopt::runtime {

ArenaPlan planArena(const std::vector<size_t> &sizes,
                    const std::vector<Lifetime> &lifetimes, size_t alignment) {
  const size_t n = sizes.size();
  ArenaPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Large tensors first: they are the hardest to fit into gaps later.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return lifetimes[a].firstUse < lifetimes[b].firstUse;
  });

  struct Placed {
    size_t offset, end;
  };
  std::vector<size_t> placed;
  for (size_t t : order) {
    size_t size = alignUp(sizes[t], alignment);
    if (size == 0) {
      plan.offsets[t] = 0;
      continue;
    }
    std::vector<Placed> conflicts;
    for (size_t other : placed) {
      bool overlap = lifetimes[t].firstUse <= lifetimes[other].lastUse &&
                     lifetimes[other].firstUse <= lifetimes[t].lastUse;
      if (overlap)
        conflicts.push_back(
            {plan.offsets[other],
             plan.offsets[other] + alignUp(sizes[other], alignment)});
    }
    std::sort(
        conflicts.begin(), conflicts.end(),
        [](const Placed &a, const Placed &b) { return a.offset < b.offset; });
    // Best fit: the smallest gap between live tensors that holds `size`.
    size_t bestOffset = 0, bestGap = std::numeric_limits<size_t>::max();
    bool found = false;
    size_t cursor = 0;
    for (const Placed &c : conflicts) {
      if (c.offset > cursor) {
        size_t gap = c.offset - cursor;
        if (gap >= size && gap < bestGap) {
          bestGap = gap;
          bestOffset = cursor;
          found = true;
        }
      }
      cursor = std::max(cursor, c.end);
    }
    plan.offsets[t] = found ? bestOffset : cursor;
    plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[t] + size);
    placed.push_back(t);
  }
  return plan;
}

} // namespace gopt::runtime
