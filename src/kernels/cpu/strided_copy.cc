#include "kernels/cpu/strided_copy.h"

#include <emmintrin.h>  // SSE2: part of every x86-64 CPU

#include <algorithm>

#include "core/parallel.h"
#include "kernels/kernel_def.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kTile = 32;

// One dimension of a box: extent, destination stride, source stride (elements).
struct Dim {
  int64_t n, ds, ss;
};

// Drops unit dimensions and merges each dimension into its outer neighbour when both walk contiguously across
// the pair. The result has no dimension of extent 1 (an empty result is a single element).
std::vector<Dim> Simplify(std::span<const int64_t> shape, std::span<const int64_t> ds, std::span<const int64_t> ss) {
  std::vector<Dim> dims;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (!dims.empty()) {
      Dim& p = dims.back();
      if (p.ds == ds[k] * shape[k] && p.ss == ss[k] * shape[k]) {
        p = {p.n * shape[k], ds[k], ss[k]};
        continue;
      }
    }
    dims.push_back({shape[k], ds[k], ss[k]});
  }
  return dims;
}

// A row-major walk over `dims`, keeping the destination and source offsets of the current index.
class Odometer {
 public:
  explicit Odometer(const std::vector<Dim>& dims, size_t rank) : dims_(dims), idx_(rank, 0) {}
  void Seek(int64_t flat) {
    d_ = s_ = 0;
    for (size_t k = idx_.size(); k-- > 0;) {
      const Dim& m = dims_[k];
      idx_[k] = flat % m.n;
      flat /= m.n;
      d_ += idx_[k] * m.ds;
      s_ += idx_[k] * m.ss;
    }
  }
  void Next() {
    for (size_t k = idx_.size(); k-- > 0;) {
      const Dim& m = dims_[k];
      d_ += m.ds;
      s_ += m.ss;
      if (++idx_[k] < m.n) return;
      d_ -= m.ds * m.n;
      s_ -= m.ss * m.n;
      idx_[k] = 0;
    }
  }
  int64_t dst() const { return d_; }
  int64_t src() const { return s_; }

 private:
  const std::vector<Dim>& dims_;
  std::vector<int64_t> idx_;
  int64_t d_ = 0, s_ = 0;
};

// dims[t] has source stride 1 and the last dim destination stride 1: copy 2-D tiles of (dims[t], last).
template <typename W>
void TiledCopy(const std::vector<Dim>& dims, size_t t, W* dst, const W* src, int threads, TileFn tile) {
  std::vector<Dim> outer;
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    if (k != t) outer.push_back(dims[k]);
  }
  int64_t n_outer = 1;
  for (const Dim& m : outer) n_outer *= m.n;
  const int64_t rows = dims[t].n, drow = dims[t].ds;
  const int64_t cols = dims.back().n, scol = dims.back().ss;
  const int64_t row_blocks = (rows + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / (kTile * cols));
  ParallelFor(threads, n_outer * row_blocks, grain, [&](int64_t begin, int64_t end) {
    Odometer od(outer, outer.size());
    int64_t cur = -1;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / row_blocks, r0 = (item % row_blocks) * kTile;
      if (o != cur) {
        if (cur >= 0 && o == cur + 1) {
          od.Next();
        } else {
          od.Seek(o);
        }
        cur = o;
      }
      const int64_t nr = std::min(kTile, rows - r0);
      W* d = dst + od.dst() + r0 * drow;
      const W* s = src + od.src() + r0;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        tile(d + c0, drow, s + c0 * scol, scol, nr, std::min(kTile, cols - c0));
      }
    }
  });
}

template <typename W>
void CopyBox(const std::vector<Dim>& dims, W* dst, const W* src, int threads, const TileKernels& tiles) {
  const size_t rank = dims.size();
  if (rank == 0) {
    *dst = *src;
    return;
  }
  int64_t total = 1;
  for (const Dim& m : dims) total *= m.n;
  threads = CopyThreads(threads, total * static_cast<int64_t>(sizeof(W)));
  const Dim last = dims.back();
  if (rank >= 2 && last.ds == 1 && last.ss != 1 && last.ss != 0) {
    for (size_t t = rank - 1; t-- > 0;) {
      if (dims[t].ss == 1) {
        TiledCopy(dims, t, dst, src, threads, tiles.For(static_cast<int>(sizeof(W))));
        return;
      }
    }
  }
  // Elements [begin, end) of one row along the last dimension.
  auto row = [last](W* d, const W* s, int64_t begin, int64_t end) {
    if (last.ds == 1 && last.ss == 1) {
      CopyRun(d + begin, s + begin, end - begin);
    } else if (last.ds == 1 && last.ss == 0) {
      std::fill(d + begin, d + end, *s);
    } else {
      for (int64_t i = begin; i < end; ++i) d[i * last.ds] = s[i * last.ss];
    }
  };
  const int64_t grain_elems = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)));
  if (rank == 1) {  // one long row: split the row itself
    ParallelFor(threads, last.n, grain_elems, [&](int64_t begin, int64_t end) { row(dst, src, begin, end); });
    return;
  }
  const int64_t rows = total / last.n;
  ParallelFor(threads, rows, std::max<int64_t>(1, grain_elems / last.n), [&](int64_t begin, int64_t end) {
    Odometer od(dims, rank - 1);
    od.Seek(begin);
    for (int64_t r = begin; r < end; ++r) {
      row(dst + od.dst(), src + od.src(), 0, last.n);
      od.Next();
    }
  });
}

template <typename W>
void TileScalar(void* dst, int64_t drow, const void* src, int64_t scol, int64_t rows, int64_t cols) {
  W* d = static_cast<W*>(dst);
  const W* s = static_cast<const W*>(src);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) d[r * drow + c] = s[r + c * scol];
  }
}

// 4-byte tiles in 4x4 register transposes (shuffles move bits exactly, whatever the 4-byte type).
void Tile32Sse2(void* dst, int64_t drow, const void* src, int64_t scol, int64_t rows, int64_t cols) {
  float* d = static_cast<float*>(dst);
  const float* s = static_cast<const float*>(src);
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const float* sp = s + r + c * scol;
      __m128 v0 = _mm_loadu_ps(sp), v1 = _mm_loadu_ps(sp + scol), v2 = _mm_loadu_ps(sp + 2 * scol),
             v3 = _mm_loadu_ps(sp + 3 * scol);
      _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
      float* dp = d + r * drow + c;
      _mm_storeu_ps(dp, v0);
      _mm_storeu_ps(dp + drow, v1);
      _mm_storeu_ps(dp + 2 * drow, v2);
      _mm_storeu_ps(dp + 3 * drow, v3);
    }
    if (c < cols) TileScalar<uint32_t>(d + r * drow + c, drow, s + r + c * scol, scol, 4, cols - c);
  }
  if (r < rows) TileScalar<uint32_t>(d + r * drow, drow, s + r, scol, rows - r, cols);
}

// 2-byte tiles in 8x8 register transposes.
void Tile16Sse2(void* dst, int64_t drow, const void* src, int64_t scol, int64_t rows, int64_t cols) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  const uint16_t* s = static_cast<const uint16_t*>(src);
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      const uint16_t* sp = s + r + c * scol;
      __m128i a[8];
      for (int k = 0; k < 8; ++k) a[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sp + k * scol));
      const __m128i b0 = _mm_unpacklo_epi16(a[0], a[1]), b1 = _mm_unpackhi_epi16(a[0], a[1]);
      const __m128i b2 = _mm_unpacklo_epi16(a[2], a[3]), b3 = _mm_unpackhi_epi16(a[2], a[3]);
      const __m128i b4 = _mm_unpacklo_epi16(a[4], a[5]), b5 = _mm_unpackhi_epi16(a[4], a[5]);
      const __m128i b6 = _mm_unpacklo_epi16(a[6], a[7]), b7 = _mm_unpackhi_epi16(a[6], a[7]);
      const __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
      const __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
      const __m128i c4 = _mm_unpacklo_epi32(b4, b6), c5 = _mm_unpackhi_epi32(b4, b6);
      const __m128i c6 = _mm_unpacklo_epi32(b5, b7), c7 = _mm_unpackhi_epi32(b5, b7);
      const __m128i out[8] = {_mm_unpacklo_epi64(c0, c4), _mm_unpackhi_epi64(c0, c4), _mm_unpacklo_epi64(c1, c5),
                              _mm_unpackhi_epi64(c1, c5), _mm_unpacklo_epi64(c2, c6), _mm_unpackhi_epi64(c2, c6),
                              _mm_unpacklo_epi64(c3, c7), _mm_unpackhi_epi64(c3, c7)};
      uint16_t* dp = d + r * drow + c;
      for (int k = 0; k < 8; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(dp + k * drow), out[k]);
    }
    if (c < cols) TileScalar<uint16_t>(d + r * drow + c, drow, s + r + c * scol, scol, 8, cols - c);
  }
  if (r < rows) TileScalar<uint16_t>(d + r * drow, drow, s + r, scol, rows - r, cols);
}

}  // namespace

TileFn TileKernels::For(int bytes) const {
  switch (bytes) {
    case 1: return by_size[0];
    case 2: return by_size[1];
    case 4: return by_size[2];
    case 8: return by_size[3];
    case 16: return by_size[4];
    default: break;
  }
  throw InternalError("cpu copy: no tile kernel for " + std::to_string(bytes) + "-byte elements");
}

const TileKernels& PortableTiles() {
  static const TileKernels k{{TileScalar<uint8_t>, Tile16Sse2, Tile32Sse2, TileScalar<uint64_t>,
                              TileScalar<Word16>}};
  return k;
}

int ElementBytes(DataType t) {
  if (t == DataType::kString || t == DataType::kUndefined || IsSubByte(t)) return 0;
  const int bits = DataTypeBits(t);
  return bits % 8 == 0 ? bits / 8 : 0;
}

std::vector<DataType> ByteSizedTypes() {
  std::vector<DataType> out;
  for (DataType t : dtypes::All()) {
    if (ElementBytes(t) > 0) out.push_back(t);
  }
  return out;
}

void StridedCopy(int elem_bytes, void* dst, std::span<const int64_t> dst_strides, const void* src,
                 std::span<const int64_t> src_strides, std::span<const int64_t> shape, int threads,
                 const TileKernels& tiles) {
  for (int64_t d : shape) {
    if (d <= 0) return;
  }
  const std::vector<Dim> dims = Simplify(shape, dst_strides, src_strides);
  DispatchWord(elem_bytes, [&](auto tag) {
    using W = decltype(tag);
    CopyBox(dims, static_cast<W*>(dst), static_cast<const W*>(src), threads, tiles);
  });
}

void ParallelMemcpy(void* dst, const void* src, int64_t bytes, int threads) {
  if (bytes <= 0) return;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  ParallelFor(CopyThreads(threads, bytes), bytes, kCopyGrainBytes, [&](int64_t begin, int64_t end) {
    std::memcpy(d + begin, s + begin, static_cast<size_t>(end - begin));
  });
}

void ParallelFill(int elem_bytes, void* dst, int64_t n, const void* value, int threads) {
  if (n <= 0) return;
  DispatchWord(elem_bytes, [&](auto tag) {
    using W = decltype(tag);
    W v;
    std::memcpy(&v, value, sizeof(W));
    W* d = static_cast<W*>(dst);
    const int64_t bytes = n * static_cast<int64_t>(sizeof(W));
    ParallelFor(CopyThreads(threads, bytes), n, std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W))),
                [&](int64_t begin, int64_t end) { std::fill(d + begin, d + end, v); });
  });
}

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

}  // namespace ferry::cpu
