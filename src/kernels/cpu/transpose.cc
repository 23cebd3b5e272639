// Transpose: out[i_0, ..., i_n] = in[i at perm^-1], out.shape[k] = in.shape[perm[k]] (perm defaults to reversing
// the axes); any data type with a byte-sized element. One strided copy (strided_copy.h): dimensions that stay
// contiguous are merged, so a permutation that keeps the innermost axis copies runs with memcpy, and one that
// moves it (2-D transposes, swapping the last two axes, NCHW <-> NHWC) is copied in 32x32 cache-blocked tiles,
// transposed in registers: 8x8 (4-byte) and 4x4 (8-byte) in AVX2, 4x4 (4-byte) and 8x8 (2-byte) in SSE2. Prepare
// checks perm against X's rank and resolves Y's shape and the copy's strides once per input signature.
#include <immintrin.h>

#include <optional>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

__attribute__((target("avx2"))) void Tile32Avx2(void* dst, int64_t drow, const void* src, int64_t scol,
                                                int64_t rows, int64_t cols) {
  float* d = static_cast<float*>(dst);
  const float* s = static_cast<const float*>(src);
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      const float* sp = s + r + c * scol;
      __m256 a[8];
      for (int k = 0; k < 8; ++k) a[k] = _mm256_loadu_ps(sp + k * scol);
      const __m256 t0 = _mm256_unpacklo_ps(a[0], a[1]), t1 = _mm256_unpackhi_ps(a[0], a[1]);
      const __m256 t2 = _mm256_unpacklo_ps(a[2], a[3]), t3 = _mm256_unpackhi_ps(a[2], a[3]);
      const __m256 t4 = _mm256_unpacklo_ps(a[4], a[5]), t5 = _mm256_unpackhi_ps(a[4], a[5]);
      const __m256 t6 = _mm256_unpacklo_ps(a[6], a[7]), t7 = _mm256_unpackhi_ps(a[6], a[7]);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* dp = d + r * drow + c;
      _mm256_storeu_ps(dp + 0 * drow, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(dp + 1 * drow, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(dp + 2 * drow, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(dp + 3 * drow, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(dp + 4 * drow, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(dp + 5 * drow, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(dp + 6 * drow, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(dp + 7 * drow, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (; c < cols; ++c) {
      for (int64_t k = 0; k < 8; ++k) d[(r + k) * drow + c] = s[r + k + c * scol];
    }
  }
  if (r < rows) PortableTiles().For(4)(d + r * drow, drow, s + r, scol, rows - r, cols);
}

__attribute__((target("avx2"))) void Tile64Avx2(void* dst, int64_t drow, const void* src, int64_t scol,
                                                int64_t rows, int64_t cols) {
  double* d = static_cast<double*>(dst);
  const double* s = static_cast<const double*>(src);
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const double* sp = s + r + c * scol;
      const __m256d a0 = _mm256_loadu_pd(sp), a1 = _mm256_loadu_pd(sp + scol), a2 = _mm256_loadu_pd(sp + 2 * scol),
                    a3 = _mm256_loadu_pd(sp + 3 * scol);
      const __m256d t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
      const __m256d t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
      double* dp = d + r * drow + c;
      _mm256_storeu_pd(dp + 0 * drow, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(dp + 1 * drow, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(dp + 2 * drow, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(dp + 3 * drow, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
    for (; c < cols; ++c) {
      for (int64_t k = 0; k < 4; ++k) d[(r + k) * drow + c] = s[r + k + c * scol];
    }
  }
  if (r < rows) PortableTiles().For(8)(d + r * drow, drow, s + r, scol, rows - r, cols);
}

const TileKernels& Avx2Tiles() {
  const TileKernels& p = PortableTiles();
  static const TileKernels k{{p.For(1), p.For(2), Tile32Avx2, Tile64Avx2, p.For(16)}};
  return k;
}

// Y's shape and the strided copy of one signature.
struct TransposePlan {
  Shape out_shape;
  std::vector<int64_t> dst_strides, src_strides;
};

class Transpose : public OpKernel {
 public:
  Transpose(const ir::Node& node, const TileKernels& tiles) : tiles_(tiles), perm_(ref::ReadPerm(node)) {}

  // perm must have X's rank (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const size_t rank = x.shape.size();
    const std::vector<int64_t> perm =
        ref::ResolvePerm(perm_, Tensor::Wrap(x.dtype, x.shape, nullptr, nullptr), ctx.Describe());
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape);
    TransposePlan p;
    p.out_shape.resize(rank);
    p.src_strides.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      p.out_shape[i] = x.shape[static_cast<size_t>(perm[i])];
      p.src_strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    p.dst_strides = RowMajorStrides(p.out_shape);
    ctx.SetOutput(0, x.dtype, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const TransposePlan& p = ctx.state<TransposePlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    StridedCopy(ElementBytes(x.dtype()), y.raw_data(), p.dst_strides, x.raw_data(), p.src_strides, p.out_shape,
                ctx.threads(), tiles_);
  }

 private:
  const TileKernels& tiles_;
  std::optional<std::vector<int64_t>> perm_;
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "Transpose",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}},
         .create = [](const ir::Node& n, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<Transpose>(n, Avx2Tiles());
         },
         .isa = {Isa::kAvx2},
         .name = "cpu.any_transpose__avx2.1"});
  r.Add({.op = "Transpose",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}},
         .create = [](const ir::Node& n, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<Transpose>(n, PortableTiles());
         },
         .name = "cpu.any_transpose__scalar.1"});
}

}  // namespace ferry::cpu
