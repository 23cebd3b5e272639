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

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    const int64_t n = rank ? x.dim(axis) : 1;
    Shape out_shape;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= x.dim(d);
      if (d > axis) inner *= x.dim(d);
      if (d != axis) {
        out_shape.push_back(x.dim(d));
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    Tensor& y = ctx.Output(0, DataType::kInt64, out_shape);
    if (y.size() == 0) return;
    if (n == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' has shape " + ShapeToString(x.shape()) +
                                 "; cannot take the arg " + (kMax ? "max" : "min") + " of an empty axis " +
                                 std::to_string(axis));
    }
    int64_t* out = y.data<int64_t>();
    Dispatch(NumericTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
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
