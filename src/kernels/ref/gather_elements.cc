// GatherElements: out[i] = data[i with coordinate `axis` replaced by indices[i]]; out has the indices' shape.
// Negative indices count from the end; out-of-range ones are an InvalidArgumentError (Compute's: they are data).
// Prepare checks the shapes and resolves the axis and data's strides.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class GatherElements : public OpKernel {
 public:
  explicit GatherElements(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  // The resolved axis, data's strides and its size along the axis.
  struct Plan {
    int64_t axis = 0, dim = 0;
    std::vector<int64_t> ds;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0 || static_cast<int64_t>(indices.shape.size()) != rank) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) +
                                 " must have the rank of input 'data' " + ctx.InputString(0) + " (>= 1)");
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<size_t>(d);
      if (d != axis && indices.shape[u] > data.shape[u]) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) +
                                   " is larger than input 'data' " + ctx.InputString(0) + " in dimension " +
                                   std::to_string(d));
      }
    }
    DispatchElements(data.dtype, ctx.Describe(), [](auto) {});  // a type with a storage layout
    ctx.EmplaceState(Plan{axis, data.shape[static_cast<size_t>(axis)], Strides(data.shape)});
    ctx.SetOutput(0, data.dtype, indices.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Plan& plan = ctx.state<Plan>();
    Tensor& y = ctx.Output(0);
    const int64_t n = indices.size();
    if (n == 0) return;
    const int64_t rank = indices.rank(), axis = plan.axis, dim = plan.dim;
    const std::vector<int64_t>& ds = plan.ds;
    DispatchElements(data.dtype(), "GatherElements", [&](auto acc) {  // checked by Prepare
      using A = decltype(acc);
      std::vector<int64_t> cnt(static_cast<size_t>(rank), 0);
      int64_t base = 0;  // data offset of the current position, without the axis coordinate
      for (int64_t p = 0; p < n; ++p) {
        const int64_t index = IndexAt(indices, p);
        int64_t j = index < 0 ? index + dim : index;
        if (j < 0 || j >= dim) j = NormalizeIndex(index, dim, ctx.Describe() + ": input 'indices'");  // throws
        A::Set(y.raw_data(), p, A::Get(data.raw_data(), base + j * ds[static_cast<size_t>(axis)]));
        for (int64_t d = rank - 1; d >= 0; --d) {
          const auto u = static_cast<size_t>(d);
          ++cnt[u];
          if (d != axis) base += ds[u];
          if (cnt[u] < indices.dim(d)) break;
          if (d != axis) base -= ds[u] * indices.dim(d);
          cnt[u] = 0;
        }
      }
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterGatherElementsKernels(KernelRegistry& r) {
  r.Add({.op = "GatherElements",
         .since = 11,
         .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<GatherElements>});
}

}  // namespace ferry::ref
