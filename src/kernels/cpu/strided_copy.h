// The copy engine of the `cpu` backend's data-movement kernels (Transpose, Slice, Expand, Pad, Concat, Gather):
// elements move as storage words chosen by element size (1, 2, 4, 8 or 16 bytes), never by element type, so one
// instantiation serves float16 and int16 alike. A strided box copy drops unit dimensions, merges dimensions that
// are contiguous in both source and destination, and then runs one of four inner loops: contiguous runs (memcpy
// for long ones), broadcast fills, cache-blocked 2-D transposed tiles, or a plain strided walk. Work is split over
// threads only when the copy is large (kParallelCopyBytes).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/tensor.h"

namespace ferry::cpu {

// Copies and fills below this many bytes run on one thread.
inline constexpr int64_t kParallelCopyBytes = 256 * 1024;
// Smallest piece of a parallel copy handed to one thread.
inline constexpr int64_t kCopyGrainBytes = 64 * 1024;

// Threads for a copy of `bytes` bytes: `threads` above kParallelCopyBytes, else 1.
inline int CopyThreads(int threads, int64_t bytes) { return bytes > kParallelCopyBytes ? threads : 1; }

// Storage word of 16-byte elements (complex128).
struct Word16 {
  uint64_t lo = 0, hi = 0;
};

// Bytes per element the copy kernels move for `t` (1, 2, 4, 8, 16); 0 for strings and sub-byte packed types,
// which they do not accept.
int ElementBytes(DataType t);
// Every data type with ElementBytes > 0: the type list of the copy kernels' KernelDefs.
std::vector<DataType> ByteSizedTypes();

// Calls fn(W{}) with the storage word W of `bytes` bytes (uint8_t, uint16_t, uint32_t, uint64_t, Word16).
template <typename Fn>
void DispatchWord(int bytes, Fn&& fn) {
  switch (bytes) {
    case 1: fn(uint8_t{}); return;
    case 2: fn(uint16_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    case 16: fn(Word16{}); return;
    default: break;
  }
  throw InternalError("cpu copy: no storage word of " + std::to_string(bytes) + " bytes");
}

// Copies n words; memcpy for long runs, a plain loop for short ones (where a call costs more than the copy).
template <typename W>
inline void CopyRun(W* dst, const W* src, int64_t n) {
  if (n * static_cast<int64_t>(sizeof(W)) >= 128) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(W));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Copies one transposed tile: dst[r * drow + c] = src[r + c * scol] for r < rows, c < cols (rows, cols <= 32).
using TileFn = void (*)(void* dst, int64_t drow, const void* src, int64_t scol, int64_t rows, int64_t cols);

// Tile kernels by element size (index 0..4 for 1, 2, 4, 8, 16 bytes).
struct TileKernels {
  TileFn by_size[5];
  TileFn For(int bytes) const;
};
// Portable tiles: SSE2 (part of every x86-64 CPU) register transposes, 8x8 for 2-byte and 4x4 for 4-byte
// elements; plain loops for the other sizes.
const TileKernels& PortableTiles();

// The strided box copy: for every index i of `shape`,
//   dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]]     (strides in elements)
// src strides may be zero (broadcast) or negative (reversal); distinct indices must write distinct dst elements
// and dst must not overlap src. `tiles` serves the transposed case (dst contiguous along the last dimension,
// src along another one).
void StridedCopy(int elem_bytes, void* dst, std::span<const int64_t> dst_strides, const void* src,
                 std::span<const int64_t> src_strides, std::span<const int64_t> shape, int threads,
                 const TileKernels& tiles = PortableTiles());

// memcpy of `bytes` bytes, split over threads when large.
void ParallelMemcpy(void* dst, const void* src, int64_t bytes, int threads);
// Sets n elements of `elem_bytes` bytes at dst to the element at `value`, split over threads when large.
void ParallelFill(int elem_bytes, void* dst, int64_t n, const void* value, int threads);

// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> shape);

}  // namespace ferry::cpu
