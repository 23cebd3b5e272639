#include "kernels/ref/conv_util.h"

#include "ferry/error.h"

namespace ferry::ref {

std::string IntsToString(std::span<const int64_t> v) { return ShapeToString(v); }

PoolWindows::PoolWindows(const WindowGeometry& g) {
  const size_t r = g.rank();
  const int64_t out_size = g.out_size();
  const int64_t ksize = g.kernel_size();
  begin_.reserve(static_cast<size_t>(out_size) + 1);
  padded_count_.reserve(static_cast<size_t>(out_size));
  offsets_.reserve(static_cast<size_t>(std::min<int64_t>(out_size * ksize, int64_t{1} << 24)));
  begin_.push_back(0);
  std::vector<int64_t> o(r, 0), t(r, 0);
  for (int64_t q = 0; q < out_size; ++q) {
    int64_t rem = q;
    for (size_t d = r; d-- > 0;) {
      o[d] = rem % g.out[d];
      rem /= g.out[d];
    }
    int64_t padded = 1;
    for (size_t d = 0; d < r; ++d) {
      const int64_t start = o[d] * g.strides[d] - g.pad_begin[d];
      int64_t n = 0;
      for (int64_t k = 0; k < g.kernel[d]; ++k) {
        const int64_t i = start + k * g.dilations[d];
        if (i >= -g.pad_begin[d] && i < g.in[d] + g.pad_end[d]) ++n;
      }
      padded *= n;
    }
    padded_count_.push_back(padded);
    // every tap, keeping those inside the input
    std::fill(t.begin(), t.end(), 0);
    for (int64_t k = 0; k < ksize; ++k) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pad_begin[d] + t[d] * g.dilations[d];
        if (i < 0 || i >= g.in[d]) {
          inside = false;
          break;
        }
        off = off * g.in[d] + i;
      }
      if (inside) offsets_.push_back(off);
      for (size_t d = r; d-- > 0;) {
        if (++t[d] < g.kernel[d]) break;
        t[d] = 0;
      }
    }
    begin_.push_back(static_cast<int64_t>(offsets_.size()));
  }
}

}  // namespace ferry::ref
