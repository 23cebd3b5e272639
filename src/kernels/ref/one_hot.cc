// OneHot: out has a new dimension of size `depth` at `axis`; every element is values[0] (off) except
// out[..., indices[...], ...] = values[1] (on). Negative indices count from the end; indices outside
// [-depth, depth) give an all-off row, as the spec requires.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class OneHot : public OpKernel {
 public:
  explicit OneHot(const ir::Node& node) : axis_(node.GetInt("axis", -1)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& indices = ctx.required_input(0);
    const Tensor& depth_t = ctx.required_input(1);
    const Tensor& values = ctx.required_input(2);
    const int64_t depth = ReadScalarInteger(depth_t, ctx.Describe() + ": input 'depth'");
    if (depth <= 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'depth' must be positive, got " + std::to_string(depth));
    }
    if (values.size() != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'values' must hold [off_value, on_value], got " +
                                 DescribeTensor(values));
    }
    const int64_t rank = indices.rank() + 1;
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    Shape out_shape(indices.shape().begin(), indices.shape().begin() + axis);
    out_shape.push_back(depth);
    out_shape.insert(out_shape.end(), indices.shape().begin() + axis, indices.shape().end());
    const std::vector<int64_t> idx = ReadIntegers(indices, ctx.Describe() + ": input 'indices'");
    Tensor& y = ctx.Output(0, values.dtype(), out_shape);
    FillElements(y.dtype(), y.raw_data(), 0, y.size(), values.raw_data(), 0);
    int64_t inner = 1;
    for (int64_t d = axis; d < indices.rank(); ++d) inner *= indices.dim(d);
    DispatchElements(y.dtype(), ctx.Describe(), [&](auto acc) {
      using A = decltype(acc);
      const auto on = A::Get(values.raw_data(), 1);
      for (size_t p = 0; p < idx.size(); ++p) {
        int64_t v = idx[p] < 0 ? idx[p] + depth : idx[p];
        if (v < 0 || v >= depth) continue;
        const int64_t o = static_cast<int64_t>(p) / inner, i = static_cast<int64_t>(p) % inner;
        A::Set(y.raw_data(), (o * depth + v) * inner + i, on);
      }
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterOneHotKernels(KernelRegistry& r) {
  r.Add({.op = "OneHot",
         .since = 9,
         .types = {{"T1", dtypes::Numeric()}, {"T2", dtypes::Numeric()}, {"T3", dtypes::All()}},
         .create = MakeKernel<OneHot>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
