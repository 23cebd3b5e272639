// What the ref convolution and pooling kernels share on top of the window geometry (semantics/window.h):
// im2col / col2im, and the window iterator the pools reduce over.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ferry/tensor.h"
#include "ir/graph.h"
#include "semantics/window.h"

namespace ferry {
class Workspace;
}

namespace ferry::ref {

// The window geometry itself (attributes, output extents, pads) is the op-semantics layer's (semantics/window.h),
// shared with shape inference and the cpu kernels; the ref kernels name it unqualified.
using semantics::AutoPad;
using semantics::ConvShape;
using semantics::ResolveConv;
using semantics::ResolveWindow;
using semantics::SpatialAttr;
using semantics::WindowAttrs;
using semantics::WindowGeometry;

// Float convolution (the ref Conv kernel's own code path): y [N, M, out...] += conv(x [N, C, in...], w) for the
// shapes in s. y must hold the bias (or zeros) on entry. Defined in conv.cc.
void ConvF32(const float* x, const float* w, const ConvShape& s, float* y, int threads);
// What ConvF32 keeps for `s` with `threads` (PrepareContext::workspace): GemmF32's packing panels (gemm.h), none for
// the depthwise loop. Defined in conv.cc.
void AddConvF32Workspace(const ConvShape& s, int threads, Workspace& ws);

// Integer convolution on zero-point-adjusted int32 data (ConvInteger, QLinearConv): y += conv(x, w) with
// wrap-around int32 accumulation. y must hold the bias (or zeros) on entry. Defined in conv_integer.cc.
void ConvInt32(const int32_t* x, const int32_t* w, const ConvShape& s, int32_t* y, int threads);

// Range of output positions [lo, hi) along one dim whose tap `t` falls inside the input.
inline void ValidOutputRange(int64_t in, int64_t out, int64_t stride, int64_t base, int64_t* lo, int64_t* hi) {
  // input index = o*stride + base, need 0 <= index < in
  int64_t l = base >= 0 ? 0 : (-base + stride - 1) / stride;
  int64_t h = in - 1 - base >= 0 ? (in - 1 - base) / stride + 1 : 0;
  l = std::min(l, out);
  h = std::clamp(h, l, out);
  *lo = l;
  *hi = h;
}

namespace detail {
// Walks every (row = channel × kernel tap, outer output position) of an im2col matrix and calls
// fn(row, dst_offset_in_col, src_plane_offset or -1 when the outer position is in padding, lo, hi, last_base)
// where along the last dim output positions [lo, hi) read input (o*stride_last + last_base).
template <typename Fn>
void ForEachColSegment(int64_t row, const WindowGeometry& g, Fn&& fn) {
  const size_t r = g.rank();
  const int64_t ksize = g.kernel_size();
  const int64_t out_last = g.out[r - 1];
  const int64_t outer = g.out_size() / std::max<int64_t>(out_last, 1);
  int64_t tap = row % ksize;
  int64_t taps[8];
  std::vector<int64_t> taps_big;
  int64_t* t = taps;
  if (r > 8) {
    taps_big.resize(r);
    t = taps_big.data();
  }
  for (size_t d = r; d-- > 0;) {
    t[d] = tap % g.kernel[d];
    tap /= g.kernel[d];
  }
  const int64_t last_base = t[r - 1] * g.dilations[r - 1] - g.pad_begin[r - 1];
  int64_t lo, hi;
  ValidOutputRange(g.in[r - 1], out_last, g.strides[r - 1], last_base, &lo, &hi);
  for (int64_t q = 0; q < outer; ++q) {
    // decompose q over out[0..r-2] and build the input offset of the row start
    int64_t rem = q, src = 0, mul = g.in[r - 1];
    bool valid = true;
    for (size_t d = r - 1; d-- > 0;) {
      const int64_t o = rem % g.out[d];
      rem /= g.out[d];
      const int64_t i = o * g.strides[d] + t[d] * g.dilations[d] - g.pad_begin[d];
      if (i < 0 || i >= g.in[d]) {
        valid = false;
        break;
      }
      src += i * mul;
      mul *= g.in[d];
    }
    fn(q * out_last, valid ? src : int64_t{-1}, lo, hi, last_base);
  }
}
}  // namespace detail

// col[(c·K + tap) × out_size] = x[c] sampled at each output position's tap (zero in the padding), for `channels`
// input planes of g.in_size() elements each. K = g.kernel_size(). Rows are split over `threads`.
template <typename T>
void Im2Col(const T* x, int64_t channels, const WindowGeometry& g, T* col, int threads) {
  const int64_t rows = channels * g.kernel_size();
  const int64_t out_size = g.out_size();
  const int64_t in_size = g.in_size();
  const int64_t stride = g.strides[g.rank() - 1];
  const int64_t out_last = g.out[g.rank() - 1];
  const int64_t work = rows * out_size;
  ParallelFor(work < (1 << 16) ? 1 : threads, rows, 4, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const T* plane = x + (row / g.kernel_size()) * in_size;
      T* dst_row = col + row * out_size;
      detail::ForEachColSegment(row, g, [&](int64_t dst_off, int64_t src, int64_t lo, int64_t hi, int64_t base) {
        T* dst = dst_row + dst_off;
        if (src < 0) {
          std::fill(dst, dst + out_last, T{});
          return;
        }
        std::fill(dst, dst + lo, T{});
        const T* s = plane + src;  // output o reads s[o*stride + base], inside the plane for o in [lo, hi)
        if (stride == 1) {
          if (hi > lo) std::copy(s + lo + base, s + hi + base, dst + lo);
        } else {
          for (int64_t o = lo; o < hi; ++o) dst[o] = s[o * stride + base];
        }
        std::fill(dst + hi, dst + out_last, T{});
      });
    }
  });
}

// The adjoint of Im2Col: x[c] += every col entry scattered back to the input position it was sampled from
// (entries that fall in the padding are dropped). Channels are split over `threads`.
template <typename T>
void Col2ImAdd(const T* col, int64_t channels, const WindowGeometry& g, T* x, int threads) {
  const int64_t ksize = g.kernel_size();
  const int64_t out_size = g.out_size();
  const int64_t in_size = g.in_size();
  const int64_t stride = g.strides[g.rank() - 1];
  const int64_t work = channels * ksize * out_size;
  ParallelFor(work < (1 << 16) ? 1 : threads, channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      T* plane = x + c * in_size;
      for (int64_t row = c * ksize; row < (c + 1) * ksize; ++row) {
        const T* src_row = col + row * out_size;
        detail::ForEachColSegment(row, g, [&](int64_t off, int64_t dst, int64_t lo, int64_t hi, int64_t base) {
          if (dst < 0) return;
          const T* s = src_row + off;
          T* d = plane + dst;
          for (int64_t o = lo; o < hi; ++o) d[o * stride + base] += s[o];
        });
      }
    }
  });
}

// The windows of a pool, precomputed once per geometry: for output position o (row-major over g.out), the input
// offsets (row-major within one plane) of its taps that fall inside the input, and how many of its taps fall
// inside the padded input (what count_include_pad divides by).
class PoolWindows {
 public:
  explicit PoolWindows(const WindowGeometry& g);
  int64_t out_size() const { return static_cast<int64_t>(begin_.size()) - 1; }
  std::span<const int64_t> taps(int64_t o) const {
    return {offsets_.data() + begin_[static_cast<size_t>(o)],
            static_cast<size_t>(begin_[static_cast<size_t>(o) + 1] - begin_[static_cast<size_t>(o)])};
  }
  int64_t padded_count(int64_t o) const { return padded_count_[static_cast<size_t>(o)]; }

 private:
  std::vector<int64_t> begin_, offsets_, padded_count_;
};

// "[2,3]" style list for messages.
std::string IntsToString(std::span<const int64_t> v);

}  // namespace ferry::ref
