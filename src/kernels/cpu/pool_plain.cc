// MaxPool / AveragePool over plain N*C planes on our own loops (pool_common.h, PlainPool), replacing oneDNN's
// scalar simple_nchw path. Every window is seen as 3-D (rank 1 and 2 get leading unit dims). One task is one output
// row (fixed depth and height positions of one plane): the input rows its taps hit are listed first, in tap order
// (depth, then height), then the row's outputs reduce over those rows and the width taps, width tap innermost: ref's
// tap order (PoolWindows), so max (its ±0 ties and skipped NaN) and the float sums are ref's bit for bit. The AVX2
// loop takes the row 8 outputs at a time, up to 4 such blocks at once (independent chains), loading a block's taps
// with one load at stride 1, two loads and a deinterleave at stride 2, a gather beyond. Blocks in the interior (the
// outputs whose every width tap lies inside the row, found with ref's ValidOutputRange) load plainly; the others
// (an edge, a row shorter than 8) load under a mask of the lanes inside the row, the rest reading -inf (max: never
// wins) or +0 (sum: a sum from +0 is never -0, so adding +0 leaves it unchanged), divided per output by ref's
// divisor. MaxPool's Indices follow each output's winning tap number (row * kernel width + width tap) in a vector
// lane over the interior (the scalar loop at the edges, where ref starts from the first tap inside), turned into
// ref's flat index (row- or column-major within the plane) per row. Rows too long for 32-bit lane positions run the
// scalar loop.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/pool_common.h"
#include "kernels/ref/conv_util.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kMaxGatherStride = int64_t{1} << 27;  // lane offsets 0..7*stride stay in int32
constexpr int kBlockGroup = 4;                        // blocks of 8 outputs the AVX2 loop runs at once
constexpr int64_t kMaxMaskTaps = 16;                  // edge blocks keep their masks for kernels this wide
constexpr int64_t kMaxLanePosition = int64_t{1} << 30;  // masked loads compare 32-bit input positions

// The window as 3-D: dims 0 (depth) and 1 (height) pick input rows, dim 2 (width) runs along them.
struct Geom3 {
  int64_t in[3], out[3], k[3], s[3], dil[3], pb[3], pe[3];
};

Geom3 ToGeom3(const semantics::WindowGeometry& g) {
  Geom3 r{};
  const size_t lead = 3 - g.rank();
  for (size_t d = 0; d < 3; ++d) {
    const bool unit = d < lead;
    const size_t e = unit ? 0 : d - lead;
    r.in[d] = unit ? 1 : g.in[e];
    r.out[d] = unit ? 1 : g.out[e];
    r.k[d] = unit ? 1 : g.kernel[e];
    r.s[d] = unit ? 1 : g.strides[e];
    r.dil[d] = unit ? 1 : g.dilations[e];
    r.pb[d] = unit ? 0 : g.pad_begin[e];
    r.pe[d] = unit ? 0 : g.pad_end[e];
  }
  return r;
}

// The width dim, the outputs [lo, hi) whose every tap lies inside the row (the plain vector loads' range), and
// whether the row's positions fit the masked loads' 32-bit lanes (else the AVX2 loop leaves the row to the scalar).
// inside_w / padded_w: per output (and 8 zeros past the row), its width taps inside the row / the padded row.
struct WidthGeom {
  int64_t in, out, k, s, dil, pb, pe, lo, hi;
  bool blocked;
  const int32_t* inside_w;
  const int32_t* padded_w;
};

// The input rows one output row reads (in-plane offsets of their first element, tap order) and how many of its
// depth x height taps fall inside the padded input.
struct RowTaps {
  const float* plane;
  const int64_t* row_off;
  int64_t rows;
  int64_t padded_outer;
};

// Max of output ow over its taps inside the input, ref's way; *arg = the winning tap number (row * k + width tap),
// the first tap inside when nothing beats -inf, -1 without one.
inline void MaxOne(const RowTaps& t, const WidthGeom& w, int64_t ow, float* out, int32_t* arg) {
  const int64_t iw0 = ow * w.s - w.pb;
  float best = -std::numeric_limits<float>::infinity();
  int64_t a = -1;
  for (int64_t r = 0; r < t.rows; ++r) {
    const float* row = t.plane + t.row_off[r];
    for (int64_t kw = 0; kw < w.k; ++kw) {
      const int64_t iw = iw0 + kw * w.dil;
      if (iw < 0 || iw >= w.in) continue;
      if (a < 0) a = r * w.k + kw;
      if (row[iw] > best) {
        best = row[iw];
        a = r * w.k + kw;
      }
    }
  }
  out[ow] = best;
  if (arg) arg[ow] = static_cast<int32_t>(a);
}

// Average of output ow, ref's way: the float sum in tap order over the divisor ref uses.
inline float AverageOne(const RowTaps& t, const WidthGeom& w, bool include_pad, int64_t ow) {
  const int64_t iw0 = ow * w.s - w.pb;
  int64_t inside_w = 0, padded_w = 0;
  for (int64_t kw = 0; kw < w.k; ++kw) {
    const int64_t iw = iw0 + kw * w.dil;
    inside_w += iw >= 0 && iw < w.in;
    padded_w += iw >= -w.pb && iw < w.in + w.pe;
  }
  float sum = 0;
  for (int64_t r = 0; r < t.rows; ++r) {
    const float* row = t.plane + t.row_off[r];
    for (int64_t kw = 0; kw < w.k; ++kw) {
      const int64_t iw = iw0 + kw * w.dil;
      if (iw >= 0 && iw < w.in) sum += row[iw];
    }
  }
  const int64_t count = include_pad ? t.padded_outer * padded_w : t.rows * inside_w;
  return sum / static_cast<float>(count);
}

using MaxRowFn = void (*)(const RowTaps& t, const WidthGeom& w, float* out, int32_t* arg);
using AverageRowFn = void (*)(const RowTaps& t, const WidthGeom& w, bool include_pad, float* out);

void MaxRowScalar(const RowTaps& t, const WidthGeom& w, float* out, int32_t* arg) {
  for (int64_t ow = 0; ow < w.out; ++ow) MaxOne(t, w, ow, out, arg);
}

void AverageRowScalar(const RowTaps& t, const WidthGeom& w, bool include_pad, float* out) {
  for (int64_t ow = 0; ow < w.out; ++ow) out[ow] = AverageOne(t, w, include_pad, ow);
}

// ---- AVX2 ----------------------------------------------------------------------------------------------------

// What the vector loads need besides the pointer: lane * stride (the gather's offsets), 0..7, the row length, the
// value of lanes outside the row.
struct Lanes {
  __m256i strided, iota, in;
  __m256 pad;
};

// The vector loads of one stride kind, chosen per row so the inner loops do not branch on it: 1, 2, or kGather
// (any other stride).
constexpr int kGather = 0;

// p[0], p[s], ..., p[7s]: all inside the row (the interior), and nothing past p[7s] is read.
template <int kS>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 LoadStrided(const float* p, const Lanes& l) {
  if constexpr (kS == 1) {
    return _mm256_loadu_ps(p);
  } else if constexpr (kS == 2) {
    // lo = p[0..7], hi = p[7..14]; per 128-bit half take lo's even and hi's odd elements: [p0 p2 p8 p10 | p4 p6
    // p12 p14], then swap the middle 64-bit pairs.
    const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 7);
    const __m256 t = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
  } else {
    return _mm256_i32gather_ps(p, l.strided, 4);
  }
}

// The lanes of positions `pos` inside the row [0, in).
__attribute__((target("avx2,fma"), always_inline)) inline __m256i Inside(__m256i pos, const Lanes& l) {
  return _mm256_and_si256(_mm256_cmpgt_epi32(pos, _mm256_set1_epi32(-1)), _mm256_cmpgt_epi32(l.in, pos));
}

// The masks of the lanes inside the row for a load whose p[0] is at row position `pos`: one (two at stride 2: the
// loads of p[0..7] and p[7..14]).
template <int kS>
__attribute__((target("avx2,fma"), always_inline)) inline void TapMasks(int32_t pos, const Lanes& l, __m256i* m0,
                                                                        __m256i* m1) {
  const __m256i p = _mm256_set1_epi32(pos);
  if constexpr (kS == 1) {
    *m0 = *m1 = Inside(_mm256_add_epi32(p, l.iota), l);
  } else if constexpr (kS == 2) {
    *m0 = Inside(_mm256_add_epi32(p, l.iota), l);
    *m1 = Inside(_mm256_add_epi32(_mm256_add_epi32(p, _mm256_set1_epi32(7)), l.iota), l);
  } else {
    *m0 = *m1 = Inside(_mm256_add_epi32(p, l.strided), l);
  }
}

// LoadStrided for a block not in the interior, under TapMasks' masks: the lanes outside the row read l.pad (masked
// loads never touch the memory of a lane they leave out).
template <int kS>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 LoadMasked(const float* p, __m256i m0, __m256i m1,
                                                                            const Lanes& l) {
  if constexpr (kS == 1) {
    return _mm256_blendv_ps(l.pad, _mm256_maskload_ps(p, m0), _mm256_castsi256_ps(m0));
  } else if constexpr (kS == 2) {
    const __m256 lo = _mm256_blendv_ps(l.pad, _mm256_maskload_ps(p, m0), _mm256_castsi256_ps(m0));
    const __m256 hi = _mm256_blendv_ps(l.pad, _mm256_maskload_ps(p + 7, m1), _mm256_castsi256_ps(m1));
    const __m256 t = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
  } else {
    return _mm256_mask_i32gather_ps(l.pad, p, l.strided, _mm256_castsi256_ps(m0), 4);
  }
}

// kVecs blocks of 8 outputs (starting at outputs starts[v]) at once, independent chains so the core overlaps their
// latencies: running maxima (kMax) or float sums from 0 over the taps in ref's order, the sums divided by ref's
// divisor per output. kInside: the blocks' taps may leave the row (masked loads, their masks computed once per
// block and tap for kernels up to kMaxMaskTaps wide, else per load).
template <int kVecs, bool kMax, bool kInside, int kS>
__attribute__((target("avx2,fma"), always_inline)) inline void BlocksAvx2(const RowTaps& t, const WidthGeom& w,
                                                                          const int64_t* starts, const Lanes& l,
                                                                          const __m256* divisor, float* const* outs) {
  __m256 acc[kVecs];
  for (int v = 0; v < kVecs; ++v) acc[v] = kMax ? _mm256_set1_ps(-std::numeric_limits<float>::infinity())
                                                : _mm256_setzero_ps();
  int64_t iw0[kVecs];
  for (int v = 0; v < kVecs; ++v) iw0[v] = starts[v] * w.s - w.pb;
  if (kInside && w.k <= kMaxMaskTaps) {
    __m256i m0[kVecs][kMaxMaskTaps], m1[kVecs][kMaxMaskTaps];
    for (int v = 0; v < kVecs; ++v) {
      for (int64_t kw = 0; kw < w.k; ++kw) {
        TapMasks<kS>(static_cast<int32_t>(iw0[v] + kw * w.dil), l, &m0[v][kw], &m1[v][kw]);
      }
    }
    for (int64_t r = 0; r < t.rows; ++r) {
      const float* row = t.plane + t.row_off[r];
      for (int64_t kw = 0; kw < w.k; ++kw) {
        for (int v = 0; v < kVecs; ++v) {
          const __m256 x = LoadMasked<kS>(row + iw0[v] + kw * w.dil, m0[v][kw], m1[v][kw], l);
          acc[v] = kMax ? _mm256_max_ps(x, acc[v]) : _mm256_add_ps(acc[v], x);
        }
      }
    }
  } else {
    for (int64_t r = 0; r < t.rows; ++r) {
      const float* row = t.plane + t.row_off[r];
      for (int64_t kw = 0; kw < w.k; ++kw) {
        for (int v = 0; v < kVecs; ++v) {
          const int64_t iw = iw0[v] + kw * w.dil;
          __m256 x;
          if constexpr (kInside) {
            __m256i m0, m1;
            TapMasks<kS>(static_cast<int32_t>(iw), l, &m0, &m1);
            x = LoadMasked<kS>(row + iw, m0, m1, l);
          } else {
            x = LoadStrided<kS>(row + iw, l);
          }
          acc[v] = kMax ? _mm256_max_ps(x, acc[v]) : _mm256_add_ps(acc[v], x);
        }
      }
    }
  }
  for (int v = 0; v < kVecs; ++v) _mm256_storeu_ps(outs[v], kMax ? acc[v] : _mm256_div_ps(acc[v], divisor[v]));
}

template <bool kMax, bool kInside, int kS>
__attribute__((target("avx2,fma"), always_inline)) inline void RunBlocksAvx2(int n, const RowTaps& t,
                                                                             const WidthGeom& w, const int64_t* starts,
                                                                             const Lanes& l, const __m256* divisor,
                                                                             float* const* outs) {
  switch (n) {
    case 1: BlocksAvx2<1, kMax, kInside, kS>(t, w, starts, l, divisor, outs); break;
    case 2: BlocksAvx2<2, kMax, kInside, kS>(t, w, starts, l, divisor, outs); break;
    case 3: BlocksAvx2<3, kMax, kInside, kS>(t, w, starts, l, divisor, outs); break;
    default: BlocksAvx2<4, kMax, kInside, kS>(t, w, starts, l, divisor, outs); break;
  }
}

__attribute__((target("avx2,fma"))) inline Lanes MakeLanes(const WidthGeom& w, float pad) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return {_mm256_mullo_epi32(iota, _mm256_set1_epi32(static_cast<int32_t>(std::min(w.s, kMaxGatherStride)))), iota,
          _mm256_set1_epi32(static_cast<int32_t>(std::min(w.in, kMaxLanePosition))), _mm256_set1_ps(pad)};
}

// A group of up to kBlockGroup blocks waiting to run together: interior ones, or edge ones.
struct BlockGroup {
  int n = 0;
  int64_t starts[kBlockGroup];
  float* outs[kBlockGroup];
  __m256 divisor[kBlockGroup];
};

// Every output of the row in blocks of 8, grouped by kind (interior / edge) up to kBlockGroup at a time; the last
// block ends at the row's end (recomputing outputs it shares with the one before), and a row shorter than 8 is one
// edge block stored through a buffer.
template <bool kMax, int kS>
__attribute__((target("avx2,fma"))) void PoolRowBlocksAvx2(const RowTaps& t, const WidthGeom& w, bool include_pad,
                                                           float* out) {
  const Lanes l = MakeLanes(w, kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  const float full = static_cast<float>((include_pad ? t.padded_outer : t.rows) * w.k);
  float tmp[8];
  BlockGroup inner, edge;
  // A short row with an edge runs as one group of masked blocks: more independent chains than an interior group
  // of one or two blocks beside the edge group.
  const bool one_group = w.out <= 8 * kBlockGroup && (w.lo > 0 || w.hi < w.out);
  for (int64_t ow = 0; ow < w.out; ow += 8) {
    ow = w.out >= 8 ? std::min(ow, w.out - 8) : 0;
    const bool interior = !one_group && ow >= w.lo && ow + 8 <= w.hi;
    BlockGroup& g = interior ? inner : edge;
    g.starts[g.n] = ow;
    g.outs[g.n] = w.out >= 8 ? out + ow : tmp;
    g.divisor[g.n] = _mm256_set1_ps(full);
    if (!kMax && !interior) {  // ref's divisor per output: the outer taps times the width taps
      const int32_t* width = (include_pad ? w.padded_w : w.inside_w) + ow;
      const __m256i outer = _mm256_set1_epi32(static_cast<int32_t>(include_pad ? t.padded_outer : t.rows));
      g.divisor[g.n] = _mm256_cvtepi32_ps(
          _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(width)), outer));
    }
    if (++g.n < kBlockGroup) continue;
    if (interior) {
      RunBlocksAvx2<kMax, false, kS>(g.n, t, w, g.starts, l, g.divisor, g.outs);
    } else {
      RunBlocksAvx2<kMax, true, kS>(g.n, t, w, g.starts, l, g.divisor, g.outs);
    }
    g.n = 0;
  }
  if (inner.n > 0) RunBlocksAvx2<kMax, false, kS>(inner.n, t, w, inner.starts, l, inner.divisor, inner.outs);
  if (edge.n > 0) RunBlocksAvx2<kMax, true, kS>(edge.n, t, w, edge.starts, l, edge.divisor, edge.outs);
  if (w.out < 8) std::copy(tmp, tmp + w.out, out);
}

// MaxPool with Indices, outputs [ow, ow + 8) of the interior: a tap replaces the running maximum only where it is
// greater, and its tap number the lane's.
template <int kS>
__attribute__((target("avx2,fma"), always_inline)) inline void MaxArgBlockAvx2(const RowTaps& t, const WidthGeom& w,
                                                                               int64_t ow, const Lanes& l,
                                                                               float* out, int32_t* arg) {
  __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256i a = _mm256_set1_epi32(t.rows > 0 ? 0 : -1);  // the first tap is inside (the interior)
  for (int64_t r = 0; r < t.rows; ++r) {
    const float* base = t.plane + t.row_off[r] + ow * w.s - w.pb;
    for (int64_t kw = 0; kw < w.k; ++kw) {
      const __m256 v = LoadStrided<kS>(base + kw * w.dil, l);
      const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
      best = _mm256_blendv_ps(best, v, gt);
      const __m256i tap = _mm256_set1_epi32(static_cast<int32_t>(r * w.k + kw));
      a = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(tap), gt));
    }
  }
  _mm256_storeu_ps(out + ow, best);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(arg + ow), a);
}

template <int kS>
__attribute__((target("avx2,fma"))) void MaxArgRowAvx2(const RowTaps& t, const WidthGeom& w, float* out,
                                                       int32_t* arg) {
  const Lanes l = MakeLanes(w, -std::numeric_limits<float>::infinity());
  for (int64_t ow = 0; ow < w.lo; ++ow) MaxOne(t, w, ow, out, arg);
  int64_t ow = w.lo;
  for (; ow + 8 <= w.hi; ow += 8) MaxArgBlockAvx2<kS>(t, w, ow, l, out, arg);
  for (; ow < w.out; ++ow) MaxOne(t, w, ow, out, arg);
}

__attribute__((target("avx2,fma"))) void MaxRowAvx2(const RowTaps& t, const WidthGeom& w, float* out, int32_t* arg) {
  if (!w.blocked) {
    MaxRowScalar(t, w, out, arg);
  } else if (arg) {
    if (w.s == 1) {
      MaxArgRowAvx2<1>(t, w, out, arg);
    } else if (w.s == 2) {
      MaxArgRowAvx2<2>(t, w, out, arg);
    } else {
      MaxArgRowAvx2<kGather>(t, w, out, arg);
    }
  } else if (w.s == 1) {
    PoolRowBlocksAvx2<true, 1>(t, w, false, out);
  } else if (w.s == 2) {
    PoolRowBlocksAvx2<true, 2>(t, w, false, out);
  } else {
    PoolRowBlocksAvx2<true, kGather>(t, w, false, out);
  }
}

__attribute__((target("avx2,fma"))) void AverageRowAvx2(const RowTaps& t, const WidthGeom& w, bool include_pad,
                                                        float* out) {
  if (!w.blocked) {
    AverageRowScalar(t, w, include_pad, out);
  } else if (w.s == 1) {
    PoolRowBlocksAvx2<false, 1>(t, w, include_pad, out);
  } else if (w.s == 2) {
    PoolRowBlocksAvx2<false, 2>(t, w, include_pad, out);
  } else {
    PoolRowBlocksAvx2<false, kGather>(t, w, include_pad, out);
  }
}

// ---- driver ----------------------------------------------------------------------------------------------------

// ref's flat index of in-plane offset `off` (row-major over g.in): itself, or column-major (the first dim fastest).
int64_t ColumnMajor(const Geom3& g, int64_t off) {
  const int64_t c2 = off % g.in[2], c1 = (off / g.in[2]) % g.in[1], c0 = off / (g.in[2] * g.in[1]);
  return c0 + c1 * g.in[0] + c2 * g.in[0] * g.in[1];
}

}  // namespace

void PlainPool(const semantics::WindowGeometry& g, const PlainPoolOptions& o, PlainPoolIsa isa, const float* x,
               int64_t planes, float* y, int64_t* indices, int threads) {
  const Geom3 G = ToGeom3(g);
  WidthGeom w{G.in[2], G.out[2], G.k[2], G.s[2], G.dil[2], G.pb[2], G.pe[2], 0, 0, false, nullptr, nullptr};
  // The interior: outputs whose first and last width taps (and so every one between) lie inside the row.
  int64_t lo_first, hi_first, lo_last, hi_last;
  ref::ValidOutputRange(w.in, w.out, w.s, -w.pb, &lo_first, &hi_first);
  ref::ValidOutputRange(w.in, w.out, w.s, (w.k - 1) * w.dil - w.pb, &lo_last, &hi_last);
  w.lo = std::max(lo_first, lo_last);
  w.hi = std::max(w.lo, std::min(hi_first, hi_last));
  if (w.s > kMaxGatherStride) w.hi = w.lo;
  // Every position a block reads (the last block's last tap, 8 outputs past the row's end at most) in 32 bits.
  w.blocked = w.s <= kMaxGatherStride && w.pb + w.in + (w.out + 8) * w.s + w.k * w.dil < kMaxLanePosition;
  std::vector<int32_t> inside_w, padded_w;
  if (w.blocked && o.kind == PoolKind::kAverage) {
    inside_w.assign(static_cast<size_t>(w.out + 8), 0);
    padded_w.assign(static_cast<size_t>(w.out + 8), 0);
    for (int64_t ow = 0; ow < w.out; ++ow) {
      for (int64_t kw = 0; kw < w.k; ++kw) {
        const int64_t iw = ow * w.s - w.pb + kw * w.dil;
        inside_w[static_cast<size_t>(ow)] += iw >= 0 && iw < w.in;
        padded_w[static_cast<size_t>(ow)] += iw >= -w.pb && iw < w.in + w.pe;
      }
    }
    w.inside_w = inside_w.data();
    w.padded_w = padded_w.data();
  }
  const bool avx2 = isa == PlainPoolIsa::kAvx2;
  const MaxRowFn max_row = avx2 ? &MaxRowAvx2 : &MaxRowScalar;
  const AverageRowFn average_row = avx2 ? &AverageRowAvx2 : &AverageRowScalar;

  const int64_t in_size = g.in_size(), out_size = g.out_size();
  const int64_t rows_per_plane = G.out[0] * G.out[1];
  const int64_t tasks = planes * rows_per_plane;
  const int64_t row_work = std::max<int64_t>(1, w.out * g.kernel_size());
  const int64_t min_tasks = std::max<int64_t>(1, 32768 / row_work);
  ParallelFor(tasks * row_work < (1 << 16) ? 1 : threads, tasks, min_tasks, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> row_off(static_cast<size_t>(G.k[0] * G.k[1]));
    std::vector<int32_t> arg(indices ? static_cast<size_t>(w.out) : 0);
    for (int64_t q = begin; q < end; ++q) {
      const int64_t pl = q / rows_per_plane, rem = q % rows_per_plane;
      const int64_t od = rem / G.out[1], oh = rem % G.out[1];
      RowTaps t{x + pl * in_size, row_off.data(), 0, 0};
      int64_t padded_d = 0, padded_h = 0;
      for (int64_t kh = 0; kh < G.k[1]; ++kh) {
        const int64_t ih = oh * G.s[1] - G.pb[1] + kh * G.dil[1];
        padded_h += ih >= -G.pb[1] && ih < G.in[1] + G.pe[1];
      }
      for (int64_t kd = 0; kd < G.k[0]; ++kd) {
        const int64_t id = od * G.s[0] - G.pb[0] + kd * G.dil[0];
        padded_d += id >= -G.pb[0] && id < G.in[0] + G.pe[0];
        if (id < 0 || id >= G.in[0]) continue;
        for (int64_t kh = 0; kh < G.k[1]; ++kh) {
          const int64_t ih = oh * G.s[1] - G.pb[1] + kh * G.dil[1];
          if (ih >= 0 && ih < G.in[1]) row_off[static_cast<size_t>(t.rows++)] = (id * G.in[1] + ih) * G.in[2];
        }
      }
      t.padded_outer = padded_d * padded_h;
      const int64_t out_off = pl * out_size + rem * w.out;
      if (o.kind == PoolKind::kAverage) {
        average_row(t, w, o.count_include_pad, y + out_off);
        continue;
      }
      max_row(t, w, y + out_off, indices ? arg.data() : nullptr);
      if (!indices) continue;
      for (int64_t ow = 0; ow < w.out; ++ow) {
        const int32_t a = arg[static_cast<size_t>(ow)];
        int64_t off = 0;
        if (a >= 0) off = row_off[static_cast<size_t>(a / w.k)] + ow * w.s - w.pb + (a % w.k) * w.dil;
        indices[out_off + ow] = pl * in_size + (o.column_major ? ColumnMajor(G, off) : off);
      }
    }
  });
}

}  // namespace ferry::cpu
