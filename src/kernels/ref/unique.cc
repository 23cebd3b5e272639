// Unique: the distinct elements (or, with `axis`, distinct slices along it) of the input, sorted ascending
// (sorted=1, the default) or in order of first occurrence, plus optional outputs: the first-occurrence index
// of each, the inverse indices mapping every input element/slice to its unique entry, and the counts.
// NaNs compare equal to each other and greater than every number. Complex numbers sort as numpy sorts them,
// by real part, then imaginary part; a complex number with a NaN part counts as NaN (all such compare equal and
// sort last, as the real NaNs do; numpy's own grouping of complex NaNs depends on where they sort). Prepare checks
// the axis; the outputs but the inverse indices are dynamic (their length is the number of distinct entries).
// com.microsoft::Unique-1 (ONNX Runtime's contrib op) is this kernel too, with its differences: a 1-D x only, the
// values in order of first occurrence, outputs (y, idx, counts) where idx is the inverse indices, and every NaN a
// distinct value (ONNX Runtime keys a hash map by the float, and NaN != NaN); -0 and +0 are one value (y keeps
// the first seen) in both ops.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/complex_types.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/ms_types.h"
#include "kernels/ref/unique.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The input as slices along the axis: `shape` (X's, or [size] without `axis`), n slices, [outer, n, inner].
struct Plan {
  Shape shape;
  int64_t axis = 0, n = 0, outer = 1, inner = 1;
};

template <typename T>
bool IsNaN(const T& v) {
  if constexpr (kIsComplex<T>) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else if constexpr (std::is_floating_point_v<Acc<T>>) {
    return std::isnan(static_cast<Acc<T>>(v));
  } else {
    return false;
  }
}

// Three-way comparison: NaN sorts last and equals NaN.
template <typename T>
int Compare(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    return a < b ? -1 : (b < a ? 1 : 0);
  } else {
    const bool na = IsNaN(a), nb = IsNaN(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    if constexpr (kIsComplex<T>) {
      if (a.real() != b.real()) return a.real() < b.real() ? -1 : 1;
      return a.imag() < b.imag() ? -1 : (b.imag() < a.imag() ? 1 : 0);
    } else {
      const auto x = static_cast<Acc<T>>(a), y = static_cast<Acc<T>>(b);
      return x < y ? -1 : (y < x ? 1 : 0);
    }
  }
}

class Unique : public OpKernel {
 public:
  explicit Unique(const ir::Node& node)
      : contrib_(node.domain() == "com.microsoft"),
        has_axis_(node.has_attr("axis")),
        axis_(node.GetInt("axis", 0)),
        sorted_(!contrib_ && node.GetInt("sorted", 1) != 0) {}

  // The axis and the slices' layout; Y, indices and counts are the data's (dynamic), the inverse indices have
  // one entry per slice.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (contrib_ && x.shape.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'x' must be 1-D, got " + ctx.InputString(0));
    }
    Plan p;
    p.shape = has_axis_ ? x.shape : Shape{ShapeElementCount(x.shape)};
    const auto rank = static_cast<int64_t>(p.shape.size());
    if (rank == 0) {  // `axis` names a dimension of X
      throw InvalidArgumentError(ctx.Describe() + ": attribute 'axis' needs an input of rank >= 1, got " +
                                 ctx.InputString(0));
    }
    p.axis = has_axis_ ? NormalizeAxis(axis_, rank, ctx.Describe()) : 0;
    p.n = p.shape[static_cast<size_t>(p.axis)];
    for (int64_t d = 0; d < rank; ++d) {
      if (d < p.axis) p.outer *= p.shape[static_cast<size_t>(d)];
      if (d > p.axis) p.inner *= p.shape[static_cast<size_t>(d)];
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
    if (ctx.output_count() > inverse_output()) ctx.SetOutput(inverse_output(), DataType::kInt64, {p.n});
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& plan = ctx.state<Plan>();
    const Shape& shape = plan.shape;
    const int64_t axis = plan.axis, n = plan.n, outer = plan.outer, inner = plan.inner;
    // Sort slice numbers; equal slices keep their input order, so each group starts at its first occurrence.
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::vector<int64_t> group_of(static_cast<size_t>(n));
    std::vector<int64_t> firsts;  // first occurrence of each group, in sorted group order
    Dispatch(AllTypesWithComplex{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data<T>();
      const bool distinct_nans = contrib_;  // contrib: 1-D, so slice a is element a
      auto cmp = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            int c = Compare(p[(o * n + a) * inner + i], p[(o * n + b) * inner + i]);
            if (c) return c;
          }
        }
        if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
          if (distinct_nans && a != b && IsNaN(p[a])) return a < b ? -1 : 1;  // NaNs sort last, by position
        }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
      for (size_t k = 0; k < order.size(); ++k) {
        if (k == 0 || cmp(order[k - 1], order[k]) != 0) firsts.push_back(order[k]);
        group_of[static_cast<size_t>(order[k])] = static_cast<int64_t>(firsts.size()) - 1;
      }
    });
    const int64_t u = static_cast<int64_t>(firsts.size());
    // Output position of each group.
    std::vector<int64_t> pos(static_cast<size_t>(u));
    std::iota(pos.begin(), pos.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(static_cast<size_t>(u));
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return firsts[static_cast<size_t>(a)] < firsts[static_cast<size_t>(b)]; });
      for (int64_t k = 0; k < u; ++k) pos[static_cast<size_t>(by_first[static_cast<size_t>(k)])] = k;
    }
    Shape y_shape = shape;
    y_shape[static_cast<size_t>(axis)] = u;
    Tensor& y = ctx.Output(0, x.dtype(), y_shape);
    Tensor indices(DataType::kInt64, {u}), counts(DataType::kInt64, {u});
    Tensor inverse_scratch;
    Tensor& inverse = ctx.output_count() > inverse_output() ? ctx.Output(inverse_output())
                                                            : (inverse_scratch = Tensor(DataType::kInt64, {n}));
    // Every registered dtype has a storage layout: the description is never used.
    DispatchElements(x.dtype(), std::string(), [&](auto acc) {
      using A = decltype(acc);
      for (int64_t g = 0; g < u; ++g) {
        const int64_t at = pos[static_cast<size_t>(g)], src = firsts[static_cast<size_t>(g)];
        indices.data<int64_t>()[at] = src;
        for (int64_t o = 0; o < outer; ++o) {
          A::Copy(y.raw_data(), (o * u + at) * inner, x.raw_data(), (o * n + src) * inner, inner);
        }
      }
    });
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = pos[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
      inverse.data<int64_t>()[i] = at;
      ++counts.data<int64_t>()[at];
    }
    if (!contrib_ && ctx.output_count() > 1) ctx.SetOutput(1, Value(indices));
    if (ctx.output_count() > counts_output()) ctx.SetOutput(counts_output(), Value(counts));
  }

 private:
  // The outputs' positions: (Y, indices, inverse_indices, counts) in ai.onnx, (y, idx, counts) in com.microsoft.
  int inverse_output() const { return contrib_ ? 1 : 2; }
  int counts_output() const { return contrib_ ? 2 : 3; }

  bool contrib_;
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

void RegisterUniqueKernels(KernelRegistry& r) {
  r.Add({.op = "Unique",
         .since = 11,
         .types = {{"T", dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                             DataType::kComplex128})}},
         .create = MakeKernel<Unique>});
  r.Add({.op = "Unique",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", MsAllTensorTypes()}},
         .create = MakeKernel<Unique>});
}

std::unique_ptr<OpKernel> CreateUniqueKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Unique>(node, options);
}

}  // namespace ferry::ref
