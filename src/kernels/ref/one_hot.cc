// OneHot: out has a new dimension of size `depth` at `axis`; every element is values[0] (off) except
// out[..., indices[...], ...] = values[1] (on). Negative indices count from the end; indices outside
// [-depth, depth) give an all-off row, as the spec requires.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/one_hot.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class OneHot : public OpKernel {
 public:
  explicit OneHot(const ir::Node& node) : axis_(node.GetInt("axis", -1)) {}

  // The output shape is known when depth is a constant; dynamic otherwise.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& indices = ctx.tensor_input(0);
    const InputSpec& depth_t = ctx.tensor_input(1);
    const InputSpec& values = ctx.tensor_input(2);
    if (ShapeElementCount(depth_t.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'depth': expected a scalar, got " +
                                 std::string(DataTypeName(depth_t.dtype)) + ShapeToString(depth_t.shape));
    }
    if (ShapeElementCount(values.shape) != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'values' must hold [off_value, on_value], got " +
                                 std::string(DataTypeName(values.dtype)) + ShapeToString(values.shape));
    }
    Plan p;
    p.axis = NormalizeAxis(axis_, static_cast<int64_t>(indices.shape.size()) + 1, ctx.Describe());
    for (size_t d = static_cast<size_t>(p.axis); d < indices.shape.size(); ++d) p.inner *= indices.shape[d];
    if (const Tensor* t = ctx.constant(1)) {
      p.depth = ResolveOneHotDepth(*t, ctx);
      ctx.SetOutput(0, values.dtype, OneHotShape(indices.shape, p.axis, p.depth));
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& indices = ctx.required_input(0);
    const Tensor& values = ctx.required_input(2);
    const Plan& p = ctx.state<Plan>();
    const int64_t depth = p.depth > 0 ? p.depth : ResolveOneHotDepth(ctx.required_input(1), ctx);
    const std::vector<int64_t> idx =
        OneHotNaming(ctx, ": input 'indices'", [&] { return ReadIntegers(indices, std::string()); });
    Tensor& y =
        p.depth > 0 ? ctx.Output(0) : ctx.Output(0, values.dtype(), OneHotShape(indices.shape(), p.axis, depth));
    FillElements(y.dtype(), y.raw_data(), 0, y.size(), values.raw_data(), 0);
    const int64_t inner = p.inner;
    DispatchElements(y.dtype(), "OneHot", [&](auto acc) {
      using A = decltype(acc);
      const auto on = A::Get(values.raw_data(), 1);
      for (size_t q = 0; q < idx.size(); ++q) {
        int64_t v = idx[q] < 0 ? idx[q] + depth : idx[q];
        if (v < 0 || v >= depth) continue;
        const int64_t o = static_cast<int64_t>(q) / inner, i = static_cast<int64_t>(q) % inner;
        A::Set(y.raw_data(), (o * depth + v) * inner + i, on);
      }
    });
  }

 private:
  struct Plan {
    int64_t axis = 0;    // the new dimension's place in the output
    int64_t inner = 1;   // elements of indices after the axis
    int64_t depth = -1;  // the constant depth, or -1: read it in Compute
  };
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
