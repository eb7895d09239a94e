//===- ChunkedMatmul.h - f32 matmul in L2-sized column chunks ---*- C++ -*-===//
//
// An f32 matmul C = A B (+ bias row) (+ C) (-> relu/gelu) whose constant B
// is larger than a core's L2 (ViT-B/16's 768 x 3072 MLP weights, 9 MiB),
// run as one oneDNN matmul per chunk of B's columns. oneDNN's kernel walks
// all of B once per block of A's rows, so with a few hundred rows B was
// streamed from L3 several times; a chunk of B that fits L2 is read from
// memory once and reused for every row block. Each chunk's weights are
// packed once, at creation, into the layout oneDNN wants for that chunk.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CHUNKEDMATMUL_H
#define GOPT_RUNTIME_SRC_CPU_CHUNKEDMATMUL_H

#include "OneDnn.h"

namespace gopt::runtime::cpu {

// The column chunk width for a [rows, k] x [k, n] f32 matmul with a
// constant B, or 0 when it runs as one matmul: B must exceed
// `budgetBytes` * 3 / 2, A (read once per chunk) must fit in `budgetBytes`
// and rows lie in [16, maxRows]. Chunks are whole
// 16-column blocks of at most `budgetBytes` of B (at least 64 columns),
// balanced so the last is not a sliver.
int64_t matmulChunkColumns(int64_t rows, int64_t k, int64_t n,
                           int64_t budgetBytes, int64_t maxRows);

// The budget and row limit from the environment: GOPT_MATMUL_CHUNK_KIB
// (default 1024; 0 turns chunking off) and GOPT_MATMUL_CHUNK_MAX_ROWS
// (default 256: batch-1 shapes; a batch of 8 images has too many rows for
// A to stay in L2 while B's chunks go by, and runs as before).
int64_t matmulChunkBudgetBytes();
int64_t matmulChunkMaxRows();

// `config` (f32 matmul, inputs A, constant 2-D B [, bias row]) with `post`
// as chunks of matmulChunkColumns columns each; null where it does not
// apply (B not constant, not 2-D, transpose_a, a chunk oneDNN would run
// on its reference kernel) or `chunkColumns` is 0.
StatusOr<std::unique_ptr<LayoutKernel>>
createChunkedMatmul(const KernelConfig &config, const MatmulPostOps &post,
                    int64_t chunkColumns);

// createChunkedMatmul with the chunk width matmulChunkColumns gives
// `config`'s shapes under the environment's budget and row limit.
StatusOr<std::unique_ptr<LayoutKernel>>
createChunkedMatmul(const KernelConfig &config, const MatmulPostOps &post);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_CHUNKEDMATMUL_H
