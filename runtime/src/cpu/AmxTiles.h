//===- AmxTiles.h - What gopt's own AMX kernels share -----------*- C++ -*-===//
//
// The tile configuration (LDTILECFG's 64-byte operand), loading it so the
// compiler keeps the shapes, and whether this process may run AMX-BF16
// tiles. PointwiseAmx.cpp, ConvGradBf16.cpp and SmallConvTraining.cpp use
// them.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_AMXTILES_H
#define GOPT_RUNTIME_CPU_AMXTILES_H

#include <cstdint>

namespace gopt::runtime::cpu {

// Palette 1: per tile, its rows and bytes per row.
struct alignas(64) TileConfig {
  uint8_t palette = 1, startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "LDTILECFG reads 64 bytes");

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's _tile_loadconfig names only the first 8 bytes of the
// configuration as read, so the compiler may drop the stores of the shapes
// (SIGILL at the first tile instruction, met in PointwiseAmx.cpp): the whole
// struct as the asm's operand keeps them.
__attribute__((target("amx-tile"))) inline void
loadTileConfig(const TileConfig &config) {
  __asm__ volatile("ldtilecfg %0" ::"m"(config));
}
#endif

// Whether oneDNN would use AMX here (so DNNL_MAX_CPU_ISA caps gopt's own AMX
// kernels too: valgrind runs capped at AVX2 cannot execute tiles) and Linux
// lets this process use the tile data state (requested once per process, as
// oneDNN does). AMX implies AVX512-BW and AVX512-BF16, which the kernels'
// edges use.
bool amxBf16Usable();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_CPU_AMXTILES_H
