// Shared kernel for CumSum and CumProd: an inclusive or exclusive running sum / product along one axis
// (given as a scalar or 1-element int32/int64 input), optionally in reverse. Floating types accumulate in
// double; integers wrap like numpy.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "core/parallel.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

// The loop over [outer, n, inner] around the axis.
struct CumulativeBounds {
  int64_t outer = 1, n = 1, inner = 1;
};

// The axis input's one value (int32 or int64: PrepareCumulative checked).
inline int64_t CumulativeAxisValue(const Tensor& t) {
  return t.dtype() == DataType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
}

// Normalizes the axis against x's shape; what() names the node when it is out of range.
template <typename What>
CumulativeBounds ResolveCumulative(const Shape& x, int64_t axis_value, const What& what) {
  const int64_t rank = static_cast<int64_t>(x.size());
  // NormalizeAxis's check, with the node's description built only when it fails.
  const int64_t axis = axis_value < -rank || axis_value >= rank ? NormalizeAxis(axis_value, rank, what())
                       : axis_value < 0                         ? axis_value + rank
                                                                : axis_value;
  CumulativeBounds b;
  b.n = x[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) b.outer *= x[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank; ++d) b.inner *= x[static_cast<size_t>(d)];
  return b;
}

// Prepare of CumSum and CumProd (ref and cpu): Y has X's type and shape. The axis input's type and size and X's
// rank are checked here; the loop bounds are kept as the state (CumulativeBounds) when the axis is known, else
// Compute resolves them from its value (CumulativeBoundsOf).
inline void PrepareCumulative(PrepareContext& ctx) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& axis = ctx.tensor_input(1);
  if (axis.dtype != DataType::kInt64 && axis.dtype != DataType::kInt32) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'axis': expected an int32 or int64 tensor, got " +
                               ctx.InputString(1));
  }
  if (ShapeElementCount(axis.shape) != 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'axis' must hold exactly one value, got " +
                               std::to_string(ShapeElementCount(axis.shape)));
  }
  if (x.shape.empty()) throw InvalidArgumentError(ctx.Describe() + ": input 'x' must have rank >= 1, got a scalar");
  ctx.SetOutput(0, x.dtype, x.shape);
  if (const Tensor* a = ctx.constant(1)) {
    ctx.EmplaceState(ResolveCumulative(x.shape, CumulativeAxisValue(*a), [&] { return ctx.Describe(); }));
  }
}

// The bounds of a run: Prepare's, or resolved from the axis input's value.
inline CumulativeBounds CumulativeBoundsOf(const KernelContext& ctx) {
  if (const CumulativeBounds* known = ctx.state_if_any<CumulativeBounds>()) return *known;
  return ResolveCumulative(ctx.required_input(0).shape(), CumulativeAxisValue(ctx.required_input(1)),
                           [&] { return ctx.Describe(); });
}

template <bool kProd>
class CumulativeKernel : public OpKernel {
 public:
  explicit CumulativeKernel(const ir::Node& node)
      : exclusive_(node.GetInt("exclusive", 0) != 0), reverse_(node.GetInt("reverse", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override { PrepareCumulative(ctx); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const CumulativeBounds b = CumulativeBoundsOf(ctx);
    const int64_t n = b.n, outer = b.outer, inner = b.inner;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;

    Dispatch(NumericTypes{}, x.dtype(), ctx, [&](auto tag) {
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
