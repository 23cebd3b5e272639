// TopK: the k largest (or smallest) elements along an axis and their int64 indices.
// Opset 1 takes k as an attribute, later versions as a 1-element input; largest/sorted appear in opset 11.
// Output is always sorted; ties keep the lower index first; NaN ranks above every number. The attributes, checks and
// plan are in ref/top_k.h (shared with the cpu kernel).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/top_k.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using Plan = TopKPlan;

template <typename A>
inline bool GreaterNaN(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

class TopK final : public TopKBase {
 public:
  using TopKBase::TopKBase;

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan resolved;
    if (!prepared) {  // k read at run time: its errors are the data's (they name the node)
      resolved = Resolve(x.shape(), ctx.input(1), ctx.Describe());
    }
    const Plan& p = prepared ? *prepared : resolved;
    Tensor& values = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    Tensor& indices = prepared ? ctx.Output(1) : ctx.Output(1, DataType::kInt64, p.out_shape);
    if (values.size() == 0) return;
    const int64_t k = p.k, n = p.n, outer = p.outer, inner = p.inner;
    const bool largest = this->largest();
    Dispatch(NumericTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      T* out_v = values.data<T>();
      int64_t* out_i = indices.data<int64_t>();
      ParallelFor(ctx.threads(), outer * inner, std::max<int64_t>(1, 4096 / n), [&](int64_t b, int64_t e) {
        std::vector<std::pair<A, int64_t>> items(static_cast<size_t>(n));
        auto before = [largest](const std::pair<A, int64_t>& p, const std::pair<A, int64_t>& q) {
          bool pq = largest ? GreaterNaN(p.first, q.first) : GreaterNaN(q.first, p.first);
          bool qp = largest ? GreaterNaN(q.first, p.first) : GreaterNaN(p.first, q.first);
          return pq || (!qp && p.second < q.second);
        };
        for (int64_t s = b; s < e; ++s) {
          const int64_t o = s / inner, i = s % inner;
          const T* src = in + o * n * inner + i;
          for (int64_t j = 0; j < n; ++j) items[static_cast<size_t>(j)] = {static_cast<A>(src[j * inner]), j};
          std::partial_sort(items.begin(), items.begin() + k, items.end(), before);
          T* dv = out_v + o * k * inner + i;
          int64_t* di = out_i + o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            const auto& it = items[static_cast<size_t>(j)];
            dv[j * inner] = src[it.second * inner];
            di[j * inner] = it.second;
          }
        }
      });
    });
  }

};

}  // namespace

TopKBase::TopKBase(const ir::Node& node)
    : k_from_input_(node.opset() >= 10),
      k_attr_(node.GetInt("k", -1)),
      axis_(node.GetInt("axis", -1)),
      largest_(node.GetInt("largest", 1) != 0) {
  if (!k_from_input_ && k_attr_ < 0) {
    throw InvalidModelError(node.Describe() + ": attribute 'k' is required and must be >= 0");
  }
}

void TopKBase::Prepare(PrepareContext& ctx) const {
  const InputSpec& x = ctx.tensor_input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got a scalar");
  NormalizeAxis(axis_, rank, ctx.Describe());
  if (k_from_input_) {
    const InputSpec& kt = ctx.tensor_input(1);
    if (kt.dtype != DataType::kInt32 && kt.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'K': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    if (ShapeElementCount(kt.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'K' must hold exactly one value, got " +
                                 std::to_string(ShapeElementCount(kt.shape)) + " (" + ctx.InputString(1) + ")");
    }
    if (!ctx.constant(1)) {
      ctx.SetOutputDynamic(0);
      if (ctx.output_count() > 1) ctx.SetOutputDynamic(1);
      return;
    }
  }
  const TopKPlan& p = ctx.EmplaceState(Resolve(x.shape, ctx.constant(1), ctx.Describe()));
  ctx.SetOutput(0, x.dtype, p.out_shape);
  if (ctx.output_count() > 1) ctx.SetOutput(1, DataType::kInt64, p.out_shape);
}

TopKPlan TopKBase::Resolve(const Shape& x_shape, const Tensor* k_data, const std::string& what) const {
  const auto rank = static_cast<int64_t>(x_shape.size());
  const int64_t axis = NormalizeAxis(axis_, rank, what);
  TopKPlan p;
  p.k = k_from_input_ ? ReadInt64s(*k_data, what + ": input 'K'")[0] : k_attr_;
  p.n = x_shape[static_cast<size_t>(axis)];
  if (p.k < 0 || p.k > p.n) {
    throw InvalidArgumentError(what + ": k=" + std::to_string(p.k) + " is out of range [0, " + std::to_string(p.n) +
                               "] for axis " + std::to_string(axis) + " of input shape " + ShapeToString(x_shape));
  }
  p.out_shape = x_shape;
  p.out_shape[static_cast<size_t>(axis)] = p.k;
  for (int64_t d = 0; d < axis; ++d) p.outer *= x_shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank; ++d) p.inner *= x_shape[static_cast<size_t>(d)];
  return p;
}

void RegisterTopKKernels(KernelRegistry& r) {
  const std::vector<DataType> floats = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const std::vector<DataType> i64 = {DataType::kInt64};
  r.Add({.op = "TopK", .since = 1, .until = 9, .types = {{"T", floats}, {"I", i64}}, .create = MakeKernel<TopK>});
  r.Add({.op = "TopK",
         .since = 10,
         .until = 10,
         .types = {{"T", floats}, {"I", i64}},
         .create = MakeKernel<TopK>,
         .host_inputs = {1}});
  r.Add({.op = "TopK",
         .since = 11,
         .until = 23,
         .types = {{"T", dtypes::Concat(dtypes::Ints(), floats)}, {"I", i64}},
         .create = MakeKernel<TopK>,
         .host_inputs = {1}});
  r.Add({.op = "TopK",
         .since = 24,
         .types = {{"T", dtypes::Numeric()}, {"I", i64}},
         .create = MakeKernel<TopK>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
