// Shared kernel for CumSum and CumProd: an inclusive or exclusive running sum / product along one axis
// (given as a scalar or 1-element int32/int64 input), optionally in reverse. Floating types accumulate in
// double; integers wrap like numpy.
#pragma once

#include <memory>
#include <type_traits>

#include "core/parallel.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

template <bool kProd>
class CumulativeKernel : public OpKernel {
 public:
  explicit CumulativeKernel(const ir::Node& node)
      : exclusive_(node.GetInt("exclusive", 0) != 0), reverse_(node.GetInt("reverse", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> axis_v = ReadInt64s(ctx.required_input(1), ctx.Describe() + ": input 'axis'");
    if (axis_v.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'axis' must hold exactly one value, got " +
                                 std::to_string(axis_v.size()));
    }
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'x' must have rank >= 1, got a scalar");
    const int64_t axis = NormalizeAxis(axis_v[0], rank, ctx.Describe());
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    const int64_t n = x.dim(axis);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);

    Dispatch(NumericTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      constexpr bool kFloat = std::is_floating_point_v<Acc<T>>;
      using W = std::conditional_t<kFloat, double, uint64_t>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      auto narrow = [](W v) {
        if constexpr (kIsHalf<T>) {
          return T(static_cast<float>(v));
        } else {
          return static_cast<T>(v);  // integers: modular
        }
      };
      ParallelFor(ctx.threads(), outer, std::max<int64_t>(1, 32768 / (n * inner)), [&](int64_t b, int64_t e) {
        auto acc = std::make_unique<W[]>(static_cast<size_t>(inner));
        for (int64_t o = b; o < e; ++o) {
          std::fill(acc.get(), acc.get() + inner, W(kProd ? 1 : 0));
          for (int64_t s = 0; s < n; ++s) {
            const int64_t j = reverse_ ? n - 1 - s : s;
            const T* src = in + (o * n + j) * inner;
            T* dst = out + (o * n + j) * inner;
            for (int64_t i = 0; i < inner; ++i) {
              W v;
              if constexpr (kFloat) {
                v = static_cast<double>(static_cast<Acc<T>>(src[i]));
              } else {
                v = static_cast<uint64_t>(src[i]);
              }
              if (exclusive_) dst[i] = narrow(acc[i]);
              if constexpr (kProd) {
                acc[i] *= v;
              } else {
                acc[i] += v;
              }
              if (!exclusive_) dst[i] = narrow(acc[i]);
            }
          }
        }
      });
    });
  }

 private:
  bool exclusive_;
  bool reverse_;
};

}  // namespace ferry::ref
