// Where (opsets 9, 16): out = condition ? X : Y with numpy broadcasting of all three inputs; any numeric or bool
// type, moved as storage words by element size. Rows where all three inputs are contiguous (the whole tensor
// when the shapes are equal) go through a select microkernel: a blend of 4- and 8-byte elements in AVX-512 or
// AVX2, plain loops otherwise; rows where the condition is broadcast copy or fill from one side; any other row
// is a strided scalar loop. Prepare checks the types, resolves the broadcast and coalesces it once per input
// signature.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// o[i] = c[i] ? x[i] : y[i] for i < n; the condition is read as bytes (non-zero = true).
using SelectFn = void (*)(const uint8_t* c, const void* x, const void* y, void* o, int64_t n);

template <typename W>
void SelectScalar(const uint8_t* c, const void* xv, const void* yv, void* ov, int64_t n) {
  const W* x = static_cast<const W*>(xv);
  const W* y = static_cast<const W*>(yv);
  W* o = static_cast<W*>(ov);
  for (int64_t i = 0; i < n; ++i) {
    const W a = x[i], b = y[i];  // both loads unconditional, so the loop can vectorize
    o[i] = c[i] != 0 ? a : b;
  }
}

__attribute__((target("avx2"))) void Select32Avx2(const uint8_t* c, const void* xv, const void* yv, void* ov,
                                                  int64_t n) {
  const float* x = static_cast<const float*>(xv);
  const float* y = static_cast<const float*>(yv);
  float* o = static_cast<float*>(ov);
  const __m256i zero = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    int64_t c8;
    std::memcpy(&c8, c + i, 8);
    const __m256i is_false = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(c8)), zero);
    // blendv takes its second operand where the mask is set: y where the condition is false.
    _mm256_storeu_ps(o + i, _mm256_blendv_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i),
                                             _mm256_castsi256_ps(is_false)));
  }
  if (i < n) SelectScalar<uint32_t>(c + i, x + i, y + i, o + i, n - i);
}

__attribute__((target("avx2"))) void Select64Avx2(const uint8_t* c, const void* xv, const void* yv, void* ov,
                                                  int64_t n) {
  const double* x = static_cast<const double*>(xv);
  const double* y = static_cast<const double*>(yv);
  double* o = static_cast<double*>(ov);
  const __m256i zero = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    int32_t c4;
    std::memcpy(&c4, c + i, 4);
    const __m256i is_false = _mm256_cmpeq_epi64(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128(c4)), zero);
    _mm256_storeu_pd(o + i, _mm256_blendv_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i),
                                             _mm256_castsi256_pd(is_false)));
  }
  if (i < n) SelectScalar<uint64_t>(c + i, x + i, y + i, o + i, n - i);
}

// (The zero-masked conversions with an all-ones mask avoid GCC 12's -Wmaybe-uninitialized on the unmasked ones.)
__attribute__((target("avx512f"))) void Select32Avx512(const uint8_t* c, const void* xv, const void* yv, void* ov,
                                                       int64_t n) {
  const float* x = static_cast<const float*>(xv);
  const float* y = static_cast<const float*>(yv);
  float* o = static_cast<float*>(ov);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i c32 = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i)));
    const __mmask16 is_true = _mm512_test_epi32_mask(c32, c32);
    _mm512_storeu_ps(o + i, _mm512_mask_blend_ps(is_true, _mm512_loadu_ps(y + i), _mm512_loadu_ps(x + i)));
  }
  if (i < n) SelectScalar<uint32_t>(c + i, x + i, y + i, o + i, n - i);
}

__attribute__((target("avx512f"))) void Select64Avx512(const uint8_t* c, const void* xv, const void* yv, void* ov,
                                                       int64_t n) {
  const double* x = static_cast<const double*>(xv);
  const double* y = static_cast<const double*>(yv);
  double* o = static_cast<double*>(ov);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    int64_t c8;
    std::memcpy(&c8, c + i, 8);
    const __m512i c64 = _mm512_maskz_cvtepu8_epi64(0xFF, _mm_cvtsi64_si128(c8));
    const __mmask8 is_true = _mm512_test_epi64_mask(c64, c64);
    _mm512_storeu_pd(o + i, _mm512_mask_blend_pd(is_true, _mm512_loadu_pd(y + i), _mm512_loadu_pd(x + i)));
  }
  if (i < n) SelectScalar<uint64_t>(c + i, x + i, y + i, o + i, n - i);
}

// Select microkernels by element size (1, 2, 4, 8 bytes).
struct SelectKernels {
  SelectFn by_size[4];
  SelectFn For(int bytes) const { return by_size[bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : 3]; }
};

constexpr SelectKernels kScalarSelect{
    {SelectScalar<uint8_t>, SelectScalar<uint16_t>, SelectScalar<uint32_t>, SelectScalar<uint64_t>}};
constexpr SelectKernels kAvx2Select{{SelectScalar<uint8_t>, SelectScalar<uint16_t>, Select32Avx2, Select64Avx2}};
constexpr SelectKernels kAvx512Select{
    {SelectScalar<uint8_t>, SelectScalar<uint16_t>, Select32Avx512, Select64Avx512}};

// The prepared state of one signature: Y's element count and, unless all three inputs have Y's (then one select
// over the whole tensor), the coalesced broadcast with its inner strides.
struct WherePlan {
  int64_t n = 0;
  int elem = 0;
  std::optional<ref::BroadcastPlan<3>> bcast;
};

class Where : public OpKernel {
 public:
  Where(const ir::Node&, const SelectKernels& select) : select_(select) {}

  // condition must be bool and X, Y of one type; the three shapes must broadcast (InvalidArgumentError naming the
  // node and the inputs otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& c = ctx.tensor_input(0);
    const InputSpec& x = ctx.tensor_input(1);
    const InputSpec& y = ctx.tensor_input(2);
    if (c.dtype != DataType::kBool) {
      throw InvalidArgumentError(ctx.Describe() + ": condition must be bool, got " + ctx.InputString(0));
    }
    if (x.dtype != y.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": X and Y have different types: " + ctx.InputString(1) + ", " +
                                 ctx.InputString(2));
    }
    const Shape out_shape = ref::BroadcastShapes({c.shape, x.shape, y.shape}, ctx.Describe());
    WherePlan p;
    p.n = ShapeElementCount(out_shape);
    p.elem = ElementBytes(x.dtype);
    const bool same = ShapeElementCount(c.shape) == p.n && ShapeElementCount(x.shape) == p.n &&
                      ShapeElementCount(y.shape) == p.n;
    if (p.n > 0 && !same) p.bcast.emplace(std::array<const Shape*, 3>{&c.shape, &x.shape, &y.shape}, out_shape);
    ctx.SetOutput(0, x.dtype, out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const WherePlan& p = ctx.state<WherePlan>();
    const Tensor& c = ctx.required_input(0);
    const Tensor& x = ctx.required_input(1);
    const Tensor& y = ctx.required_input(2);
    Tensor& out = ctx.Output(0);
    const int64_t n = p.n;
    if (n == 0) return;
    const int elem = p.elem;
    const SelectFn select = select_.For(elem);
    const int threads = CopyThreads(ctx.threads(), n * elem);
    const auto* pc = static_cast<const uint8_t*>(c.raw_data());
    if (!p.bcast) {
      const char* px = static_cast<const char*>(x.raw_data());
      const char* py = static_cast<const char*>(y.raw_data());
      char* po = static_cast<char*>(out.raw_data());
      ParallelFor(threads, n, kCopyGrainBytes / elem, [&](int64_t s, int64_t e) {
        select(pc + s, px + s * elem, py + s * elem, po + s * elem, e - s);
      });
      return;
    }
    const ref::BroadcastPlan<3>& plan = *p.bcast;
    const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
    DispatchWord(elem, [&](auto tag) {
      using W = decltype(tag);
      const W* px = static_cast<const W*>(x.raw_data());
      const W* py = static_cast<const W*>(y.raw_data());
      W* po = static_cast<W*>(out.raw_data());
      plan.ForEachRow(threads, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t count) {
        if (sc == 1 && sx == 1 && sy == 1) {
          select(pc + off[0], px + off[1], py + off[2], po + o, count);
        } else if (sc == 0) {  // one side for the whole row
          const bool take_x = pc[off[0]] != 0;
          const W* from = take_x ? px + off[1] : py + off[2];
          const int64_t stride = take_x ? sx : sy;
          if (stride == 1) {
            CopyRun(po + o, from, count);
          } else if (stride == 0) {
            std::fill(po + o, po + o + count, *from);
          } else {
            for (int64_t i = 0; i < count; ++i) po[o + i] = from[i * stride];
          }
        } else if (sc == 1 && (sx | sy) == 1 && (sx & sy) == 0) {
          // A mask row against one side's single value (attention masks): the value repeated in a block on the
          // stack, so the ISA's select kernel runs the row.
          constexpr int64_t kBlock = 512;
          W rep[kBlock];
          std::fill(rep, rep + kBlock, sx == 0 ? px[off[1]] : py[off[2]]);
          for (int64_t i = 0; i < count; i += kBlock) {
            const int64_t len = std::min(kBlock, count - i);
            const void* a = sx == 1 ? static_cast<const void*>(px + off[1] + i) : rep;
            const void* b = sy == 1 ? static_cast<const void*>(py + off[2] + i) : rep;
            select(pc + off[0] + i, a, b, po + o + i, len);
          }
        } else {
          for (int64_t i = 0; i < count; ++i) {
            const W a = px[off[1] + i * sx], b = py[off[2] + i * sy];
            po[o + i] = pc[off[0] + i * sc] != 0 ? a : b;
          }
        }
      });
    });
  }

 private:
  const SelectKernels& select_;
};

}  // namespace

void RegisterWhereKernels(KernelRegistry& r) {
  const std::vector<DataType> types = dtypes::Concat(dtypes::Numeric(), {DataType::kBool});
  const auto add = [&](const SelectKernels& k, IsaSet isa, const char* name) {
    r.Add({.op = "Where",
           .since = 9,
           .types = {{"B", {DataType::kBool}}, {"T", types}},
           .create = [kp = &k](const ir::Node& n, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Where>(n, *kp);
           },
           .isa = isa,
           .name = name});
  };
  add(kAvx512Select, {Isa::kAvx512f}, "cpu.any_where__avx512.9");
  add(kAvx2Select, {Isa::kAvx2}, "cpu.any_where__avx2.9");
  add(kScalarSelect, {}, "cpu.any_where__scalar.9");
}

}  // namespace ferry::cpu
