#include "kernels/ref/copy_util.h"

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "core/parallel.h"
#include "kernels/ref/common.h"

namespace ferry::ref {
namespace {

// A box to copy after dropping unit dimensions and merging contiguous neighbours.
struct Box {
  std::vector<int64_t> shape, ds, ss;
};

Box Simplify(std::span<const int64_t> shape, std::span<const int64_t> ds, std::span<const int64_t> ss) {
  Box b;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (!b.shape.empty()) {
      size_t p = b.shape.size() - 1;
      if (b.ds[p] == ds[k] * shape[k] && b.ss[p] == ss[k] * shape[k]) {
        b.shape[p] *= shape[k];
        b.ds[p] = ds[k];
        b.ss[p] = ss[k];
        continue;
      }
    }
    b.shape.push_back(shape[k]);
    b.ds.push_back(ds[k]);
    b.ss.push_back(ss[k]);
  }
  return b;
}

// Offsets of the flat index `flat` over the first `n` dims of `b` (row-major); fills the multi-index.
void Decompose(const Box& b, size_t n, int64_t flat, std::vector<int64_t>& idx, int64_t& d, int64_t& s) {
  d = 0;
  s = 0;
  for (size_t k = n; k-- > 0;) {
    int64_t i = flat % b.shape[k];
    flat /= b.shape[k];
    idx[k] = i;
    d += i * b.ds[k];
    s += i * b.ss[k];
  }
}

// Advances the multi-index over the first `n` dims by one, keeping the offsets in step.
void Advance(const Box& b, size_t n, std::vector<int64_t>& idx, int64_t& d, int64_t& s) {
  for (size_t k = n; k-- > 0;) {
    ++idx[k];
    d += b.ds[k];
    s += b.ss[k];
    if (idx[k] < b.shape[k]) return;
    d -= b.ds[k] * b.shape[k];
    s -= b.ss[k] * b.shape[k];
    idx[k] = 0;
  }
}

constexpr int64_t kTile = 32;
constexpr int64_t kParallelGrain = 16384;  // elements per thread chunk, at least

// dst is contiguous along the last dim, src along dim rows_dim (moved to position rank-2): copy in 2-D tiles.
template <typename A>
void TiledTranspose(void* dst_base, int64_t doff, const void* src_base, int64_t soff, Box b, size_t rows_dim,
                    int threads) {
  using T = typename A::Value;
  const size_t rank = b.shape.size();
  // Move rows_dim to rank-2.
  for (auto* v : {&b.shape, &b.ds, &b.ss}) {
    int64_t x = (*v)[rows_dim];
    v->erase(v->begin() + static_cast<std::ptrdiff_t>(rows_dim));
    v->insert(v->begin() + static_cast<std::ptrdiff_t>(rank - 2), x);
  }
  const size_t n_outer = rank - 2;
  int64_t outer = 1;
  for (size_t k = 0; k < n_outer; ++k) outer *= b.shape[k];
  const int64_t rows = b.shape[rank - 2], cols = b.shape[rank - 1];
  const int64_t drow = b.ds[rank - 2], scol = b.ss[rank - 1];  // src row stride is 1, dst col stride is 1
  const int64_t row_blocks = (rows + kTile - 1) / kTile;
  T* dst = static_cast<T*>(dst_base) + doff;
  const T* src = static_cast<const T*>(src_base) + soff;
  const int64_t items = outer * row_blocks;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, kTile * cols));
  ParallelFor(threads, items, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(n_outer, 0);
    for (int64_t item = begin; item < end; ++item) {
      int64_t o = item / row_blocks, rb = item % row_blocks;
      int64_t d = 0, s = 0;
      Decompose(b, n_outer, o, idx, d, s);
      const int64_t r0 = rb * kTile, r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        int64_t r = r0;
#if defined(__SSE2__)
        if constexpr (sizeof(T) == 4) {
          // 4x4 blocks transposed in registers (shuffles move bits exactly, whatever the 4-byte type).
          for (; r + 4 <= r1; r += 4) {
            int64_t c = c0;
            for (; c + 4 <= c1; c += 4) {
              const float* sp = reinterpret_cast<const float*>(src + s + r + c * scol);
              __m128 v0 = _mm_loadu_ps(sp), v1 = _mm_loadu_ps(sp + scol), v2 = _mm_loadu_ps(sp + 2 * scol),
                     v3 = _mm_loadu_ps(sp + 3 * scol);
              _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
              float* dp = reinterpret_cast<float*>(dst + d + r * drow + c);
              _mm_storeu_ps(dp, v0);
              _mm_storeu_ps(dp + drow, v1);
              _mm_storeu_ps(dp + 2 * drow, v2);
              _mm_storeu_ps(dp + 3 * drow, v3);
            }
            for (; c < c1; ++c) {
              for (int64_t k = 0; k < 4; ++k) dst[d + (r + k) * drow + c] = src[s + r + k + c * scol];
            }
          }
        }
#endif
        for (; r < r1; ++r) {
          T* drow_ptr = dst + d + r * drow;
          const T* scol_ptr = src + s + r;
          for (int64_t c = c0; c < c1; ++c) drow_ptr[c] = scol_ptr[c * scol];
        }
      }
    }
  });
}

template <typename A>
void StridedLoop(void* dst, int64_t doff, const void* src, int64_t soff, const Box& b, int threads) {
  const size_t rank = b.shape.size();
  if (rank == 0) {
    A::Set(dst, doff, A::Get(src, soff));
    return;
  }
  const int64_t inner = b.shape[rank - 1];
  const int64_t ids = b.ds[rank - 1], iss = b.ss[rank - 1];
  if constexpr (!A::kPacked && A::kTrivial) {
    if (rank >= 2 && ids == 1 && iss != 1 && iss != 0 && inner >= 4) {
      for (size_t j = rank - 1; j-- > 0;) {
        if (b.ss[j] == 1 && b.shape[j] >= 4) {
          TiledTranspose<A>(dst, doff, src, soff, b, j, threads);
          return;
        }
      }
    }
  }
  const size_t n_outer = rank - 1;
  int64_t outer = 1;
  for (size_t k = 0; k < n_outer; ++k) outer *= b.shape[k];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, inner));
  ParallelFor(A::kPacked ? 1 : threads, outer, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(n_outer, 0);
    int64_t d = 0, s = 0;
    Decompose(b, n_outer, begin, idx, d, s);
    for (int64_t o = begin; o < end; ++o) {
      const int64_t dd = doff + d, sd = soff + s;
      if (ids == 1 && iss == 1) {
        A::Copy(dst, dd, src, sd, inner);
      } else if (ids == 1 && iss == 0) {
        typename A::Value v = A::Get(src, sd);
        A::Fill(dst, dd, inner, v);
      } else {
        for (int64_t i = 0; i < inner; ++i) A::Set(dst, dd + i * ids, A::Get(src, sd + i * iss));
      }
      Advance(b, n_outer, idx, d, s);
    }
  });
}

template <typename T>
void ReadAsInt64(const T* p, int64_t n, int64_t* out, const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = p[i] ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_same_v<T, uint64_t>) {
        if (p[i] > static_cast<uint64_t>(INT64_MAX)) {
          throw InvalidArgumentError(what + ": value " + std::to_string(p[i]) + " does not fit in int64");
        }
      }
      out[i] = static_cast<int64_t>(p[i]);
    } else {
      double v = static_cast<double>(static_cast<Acc<T>>(p[i]));
      if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18) {
        throw InvalidArgumentError(what + ": value " + std::to_string(v) + " is not a valid integer");
      }
      out[i] = static_cast<int64_t>(v);
    }
  }
}

}  // namespace

int WriteThreads(DataType dtype, int threads) { return IsSubByte(dtype) ? 1 : threads; }

void CopyElements(DataType dtype, void* dst, int64_t di, const void* src, int64_t si, int64_t n) {
  if (n <= 0) return;
  DispatchElements(dtype, "copy", [&](auto acc) {
    using A = decltype(acc);
    A::Copy(dst, di, src, si, n);
  });
}

void FillElements(DataType dtype, void* dst, int64_t di, int64_t n, const void* value, int64_t vi) {
  if (n <= 0) return;
  DispatchElements(dtype, "fill", [&](auto acc) {
    using A = decltype(acc);
    typename A::Value v = A::Get(value, vi);
    A::Fill(dst, di, n, v);
  });
}

void CopyStrided(DataType dtype, void* dst, int64_t dst_off, std::span<const int64_t> dst_strides, const void* src,
                 int64_t src_off, std::span<const int64_t> src_strides, std::span<const int64_t> shape, int threads) {
  for (int64_t d : shape) {
    if (d <= 0) return;
  }
  Box b = Simplify(shape, dst_strides, src_strides);
  DispatchElements(dtype, "copy", [&](auto acc) {
    using A = decltype(acc);
    StridedLoop<A>(dst, dst_off, src, src_off, b, WriteThreads(dtype, threads));
  });
}

void CopyShifted(const Tensor& in, Tensor& out, std::span<const int64_t> begins, const Tensor* value, int threads) {
  if (value && out.size() > 0) FillElements(out.dtype(), out.raw_data(), 0, out.size(), value->raw_data(), 0);
  const size_t rank = out.shape().size();
  if (in.size() == 0 || out.size() == 0) return;
  std::vector<int64_t> box(rank), in_strides = Strides(in.shape()), out_strides = Strides(out.shape());
  int64_t doff = 0, soff = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t od = out.shape()[d], id = in.shape()[d], b = begins[d];
    if (b >= od || b <= -id) return;  // no overlap (also keeps the sums below from overflowing)
    const int64_t o0 = std::max<int64_t>(0, b), o1 = std::min(od, b + id);
    box[d] = o1 - o0;
    doff += o0 * out_strides[d];
    soff += (o0 - b) * in_strides[d];
  }
  CopyStrided(out.dtype(), out.raw_data(), doff, out_strides, in.raw_data(), soff, in_strides, box, threads);
}

void CheckIndexType(const Tensor& t, const std::string& what) {
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64) {
    throw InvalidArgumentError(what + ": expected an int32 or int64 tensor, got " + DescribeTensor(t));
  }
}

std::vector<int64_t> ReadIntegers(const Tensor& t, const std::string& what) {
  std::vector<int64_t> out(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kBool) {
    ReadAsInt64(t.data<bool>(), t.size(), out.data(), what);
    return out;
  }
  Dispatch(NumericTypes{}, t.dtype(), what, [&](auto tag) {
    using T = decltype(tag);
    ReadAsInt64(t.data<T>(), t.size(), out.data(), what);
  });
  return out;
}

int64_t ReadScalarInteger(const Tensor& t, const std::string& what) {
  if (t.size() != 1) {
    throw InvalidArgumentError(what + ": expected a scalar, got " + DescribeTensor(t));
  }
  return ReadIntegers(t, what)[0];
}

std::string DescribeTensor(const Tensor& t) { return std::string(DataTypeName(t.dtype())) + ShapeToString(t.shape()); }

}  // namespace ferry::ref
