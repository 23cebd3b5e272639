// Compress: keeps the slices along `axis` (of the flattened input when axis is absent) whose `condition` entry
// is true. A condition shorter than the axis drops the remaining slices; true entries past its end are an
// InvalidArgumentError.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Compress : public OpKernel {
 public:
  explicit Compress(const ir::Node& node) : has_axis_(node.has_attr("axis")), axis_(node.GetInt("axis", 0)) {}

  // The condition's type and rank, the axis and the loop around it; the output's length along the axis is the
  // number of true entries (data): it is dynamic.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& cond = ctx.tensor_input(1);
    if (cond.dtype != DataType::kBool || cond.shape.size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'condition' must be a 1-D bool tensor, got " +
                                 ctx.InputString(1));
    }
    DispatchElements(x.dtype, ctx.Describe(), [](auto) {});  // a type with a storage layout
    Plan p;
    p.shape = has_axis_ ? x.shape : Shape{ShapeElementCount(x.shape)};
    const int64_t rank = static_cast<int64_t>(p.shape.size());
    p.axis = has_axis_ ? NormalizeAxis(axis_, rank, ctx.Describe()) : 0;
    p.dim = p.shape[static_cast<size_t>(p.axis)];
    for (int64_t d = 0; d < rank; ++d) {
      if (d < p.axis) p.outer *= p.shape[static_cast<size_t>(d)];
      if (d > p.axis) p.inner *= p.shape[static_cast<size_t>(d)];
    }
    ctx.EmplaceState(std::move(p));
    ctx.SetOutputDynamic(0);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& cond = ctx.required_input(1);
    const Plan& p = ctx.state<Plan>();
    const int64_t dim = p.dim, outer = p.outer, inner = p.inner;
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond.size(); ++i) {
      if (!cond.data<bool>()[i]) continue;
      if (i >= dim) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'condition' " + DescribeTensor(cond) +
                                   " selects index " + std::to_string(i) + " beyond dimension " + std::to_string(dim));
      }
      keep.push_back(i);
    }
    Shape shape = p.shape;
    shape[static_cast<size_t>(p.axis)] = static_cast<int64_t>(keep.size());
    Tensor& y = ctx.Output(0, x.dtype(), shape);
    const int64_t k = static_cast<int64_t>(keep.size());
    DispatchElements(x.dtype(), "Compress", [&](auto acc) {  // checked by Prepare
      using A = decltype(acc);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < k; ++j) {
          A::Copy(y.raw_data(), (o * k + j) * inner, x.raw_data(), (o * dim + keep[static_cast<size_t>(j)]) * inner,
                  inner);
        }
      }
    });
  }

 private:
  struct Plan {
    Shape shape;  // x's shape, or [size] without an axis
    int64_t axis = 0, dim = 0, outer = 1, inner = 1;
  };

  bool has_axis_;
  int64_t axis_;
};

}  // namespace

void RegisterCompressKernels(KernelRegistry& r) {
  r.Add({.op = "Compress", .since = 9, .types = {{"T", dtypes::All()}, {"T1", {DataType::kBool}}},
         .create = MakeKernel<Compress>});
}

}  // namespace ferry::ref
