// TopK: the k largest (or smallest) elements along an axis and their int64 indices.
// Opset 1 takes k as an attribute, later versions as a 1-element input; largest/sorted appear in opset 11.
// Output is always sorted; ties keep the lower index first; NaN ranks above every number.
#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

template <typename A>
inline bool GreaterNaN(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

class TopK : public OpKernel {
 public:
  explicit TopK(const ir::Node& node)
      : k_from_input_(node.opset() >= 10),
        k_attr_(node.GetInt("k", -1)),
        axis_(node.GetInt("axis", -1)),
        largest_(node.GetInt("largest", 1) != 0) {
    if (!k_from_input_ && k_attr_ < 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'k' is required and must be >= 0");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got a scalar");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    int64_t k = k_attr_;
    if (k_from_input_) {
      std::vector<int64_t> kv = ReadInt64s(ctx.required_input(1), ctx.Describe() + ": input 'K'");
      if (kv.size() != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'K' must hold exactly one value, got " +
                                   std::to_string(kv.size()));
      }
      k = kv[0];
    }
    const int64_t n = x.dim(axis);
    if (k < 0 || k > n) {
      throw InvalidArgumentError(ctx.Describe() + ": k=" + std::to_string(k) + " is out of range [0, " +
                                 std::to_string(n) + "] for axis " + std::to_string(axis) + " of input shape " +
                                 ShapeToString(x.shape()));
    }
    Shape out_shape = x.shape();
    out_shape[static_cast<size_t>(axis)] = k;
    Tensor& values = ctx.Output(0, x.dtype(), out_shape);
    Tensor& indices = ctx.Output(1, DataType::kInt64, out_shape);
    if (values.size() == 0) return;

    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);
    const bool largest = largest_;
    Dispatch(NumericTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
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

 private:
  bool k_from_input_;
  int64_t k_attr_;
  int64_t axis_;
  bool largest_;
};

}  // namespace

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
