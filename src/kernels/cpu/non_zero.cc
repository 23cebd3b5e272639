// NonZero: the coordinates of the non-zero elements, as int64 [rank, count] in row-major order (a scalar counts as
// 1-D); the count is data, so the output is dynamic (Compute allocates it). Numeric and bool types: elements are
// tested as storage words by element size, floats with the sign bit masked (so -0.0 is zero and NaN is not, as ref
// compares by value). Two passes over chunks of X, split over threads when large: count each chunk's non-zeros,
// then write each chunk's coordinates at its prefix-sum column. Strings and complex fall back to ref.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Every bit but the sign bit of a W-sized word.
template <typename W>
constexpr W MagnitudeMask() {
  return static_cast<W>(~(W{1} << (sizeof(W) * 8 - 1)));
}

class NonZero : public OpKernel {
 public:
  explicit NonZero(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    ctx.tensor_input(0);  // a tensor: throws naming the node otherwise
    ctx.SetOutputDynamic(0);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t n = x.size();
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const auto rank = static_cast<int64_t>(shape.size());
    const int elem = ElementBytes(x.dtype());
    const bool by_value = IsFloatType(x.dtype());
    const int threads = CopyThreads(ctx.threads(), n * elem);
    const int64_t chunk_len = std::max<int64_t>(4096, (n + 63) / 64);
    const int64_t chunks = n == 0 ? 0 : (n + chunk_len - 1) / chunk_len;
    std::vector<int64_t> counts(static_cast<size_t>(chunks) + 1, 0);
    DispatchWord(elem, [&](auto tag) {
      using W = decltype(tag);
      if constexpr (sizeof(W) <= 8) {
        const W* p = static_cast<const W*>(x.raw_data());
        const W mask = by_value ? MagnitudeMask<W>() : static_cast<W>(~W{0});
        ParallelFor(threads, chunks, 1, [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            int64_t cnt = 0;
            const int64_t e = std::min(n, (c + 1) * chunk_len);
            for (int64_t i = c * chunk_len; i < e; ++i) cnt += (p[i] & mask) != 0;
            counts[static_cast<size_t>(c) + 1] = cnt;
          }
        });
        for (int64_t c = 0; c < chunks; ++c) counts[static_cast<size_t>(c) + 1] += counts[static_cast<size_t>(c)];
        const int64_t count = counts.back();
        Tensor& y = ctx.OutputUninitialized(0, DataType::kInt64, {rank, count});
        int64_t* out = y.data<int64_t>();
        ParallelFor(threads, chunks, 1, [&](int64_t begin, int64_t end) {
          std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
          for (int64_t c = begin; c < end; ++c) {
            int64_t start = c * chunk_len;
            for (int64_t d = rank - 1, q = start; d >= 0; --d) {  // the chunk's first coordinate
              idx[static_cast<size_t>(d)] = q % shape[static_cast<size_t>(d)];
              q /= shape[static_cast<size_t>(d)];
            }
            int64_t col = counts[static_cast<size_t>(c)];
            const int64_t e = std::min(n, (c + 1) * chunk_len);
            for (int64_t i = start; i < e; ++i) {
              if ((p[i] & mask) != 0) {
                for (int64_t d = 0; d < rank; ++d) out[d * count + col] = idx[static_cast<size_t>(d)];
                ++col;
              }
              for (int64_t d = rank - 1; d >= 0; --d) {
                if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
                idx[static_cast<size_t>(d)] = 0;
              }
            }
          }
        });
      }
    });
  }
};

}  // namespace

void RegisterNonZeroKernels(KernelRegistry& r) {
  r.Add({.op = "NonZero",
         .since = 9,
         .types = {{"T",
                    {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
                     DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUint8, DataType::kUint16,
                     DataType::kUint32, DataType::kUint64, DataType::kBool}}},
         .create = MakeKernel<NonZero>,
         .name = "cpu.num_non_zero__two_pass.9"});
}

}  // namespace ferry::cpu
