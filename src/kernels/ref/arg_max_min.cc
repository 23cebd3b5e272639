// ArgMax, ArgMin: int64 index of the largest / smallest element along one axis (keepdims, select_last_index).
// NaN counts as the extreme value for both (like numpy: the first NaN wins, or the last one with
// select_last_index).
#include <cmath>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// True when a is strictly "better" than b: larger for ArgMax, smaller for ArgMin; NaN beats any number.
template <bool kMax, typename A>
inline bool Better(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return kMax ? a > b : a < b;
}

template <bool kMax>
class ArgExtremum : public OpKernel {
 public:
  explicit ArgExtremum(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)),
        keepdims_(node.GetInt("keepdims", 1) != 0),
        select_last_(node.GetInt("select_last_index", 0) != 0) {}

  // The reduced axis and its loop bounds; an empty axis (with a non-empty output) is an error.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    Plan p;
    p.axis = NormalizeAxis(axis_, rank, ctx.Describe());
    p.n = rank ? x.shape[static_cast<size_t>(p.axis)] : 1;
    Shape out_shape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = x.shape[static_cast<size_t>(d)];
      if (d < p.axis) p.outer *= dim;
      if (d > p.axis) p.inner *= dim;
      if (d != p.axis) {
        out_shape.push_back(dim);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    if (ShapeElementCount(out_shape) != 0 && p.n == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' has shape " + ShapeToString(x.shape) +
                                 "; cannot take the arg " + (kMax ? "max" : "min") + " of an empty axis " +
                                 std::to_string(p.axis));
    }
    ctx.EmplaceState(p);
    ctx.SetOutput(0, DataType::kInt64, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& p = ctx.state<Plan>();
    const int64_t n = p.n, outer = p.outer, inner = p.inner;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    int64_t* out = y.data<int64_t>();
    Dispatch(NumericTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      ParallelFor(ctx.threads(), outer, std::max<int64_t>(1, 32768 / (n * inner)), [&](int64_t b, int64_t e) {
        std::vector<A> best(static_cast<size_t>(inner));
        for (int64_t o = b; o < e; ++o) {
          const T* base = in + o * n * inner;
          int64_t* idx = out + o * inner;
          for (int64_t i = 0; i < inner; ++i) {
            best[static_cast<size_t>(i)] = static_cast<A>(base[i]);
            idx[i] = 0;
          }
          for (int64_t j = 1; j < n; ++j) {
            const T* row = base + j * inner;
            for (int64_t i = 0; i < inner; ++i) {
              A v = static_cast<A>(row[i]);
              A& cur = best[static_cast<size_t>(i)];
              if (select_last_ ? !Better<kMax>(cur, v) : Better<kMax>(v, cur)) {
                cur = v;
                idx[i] = j;
              }
            }
          }
        }
      });
    });
  }

 private:
  struct Plan {
    int64_t axis = 0, n = 1, outer = 1, inner = 1;
  };

  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

template <bool kMax>
void RegisterArg(KernelRegistry& r, const char* op) {
  const auto base = dtypes::Concat(dtypes::Ints(), {DataType::kFloat16, DataType::kFloat, DataType::kDouble});
  const int versions[] = {1, 11, 12, 13};
  for (int i = 0; i < 4; ++i) {
    r.Add({.op = op,
           .since = versions[i],
           .until = i < 3 ? versions[i + 1] - 1 : kOpsetOpen,
           .types = {{"T", versions[i] >= 13 ? dtypes::Concat(base, {DataType::kBFloat16}) : base}},
           .create = MakeKernel<ArgExtremum<kMax>>});
  }
}

}  // namespace

void RegisterArgMaxMinKernels(KernelRegistry& r) {
  RegisterArg<true>(r, "ArgMax");
  RegisterArg<false>(r, "ArgMin");
}

}  // namespace ferry::ref
