// Gather: out[o, j..., i] = data[o, indices[j...], i] along `axis` (negative indices count from the end; an
// index outside [-dim, dim) is an InvalidArgumentError, raised by Compute: the indices are data). Rows of the
// inner dimensions move as block copies; Prepare resolves the axis and the [outer, dim, inner] geometry.
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Gather : public OpKernel {
 public:
  explicit Gather(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  // The gather's geometry for one signature: data viewed as [outer, dim, inner], n indices.
  struct Plan {
    int64_t outer = 1, dim = 0, inner = 1, n = 0;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' must have rank >= 1, got " + ctx.InputString(0));
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    DispatchElements(data.dtype, ctx.Describe(), [](auto) {});  // a type with a storage layout
    Plan p;
    p.dim = data.shape[static_cast<size_t>(axis)];
    p.n = ShapeElementCount(indices.shape);
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) p.outer *= data.shape[static_cast<size_t>(d)];
      if (d > axis) p.inner *= data.shape[static_cast<size_t>(d)];
    }
    Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
    out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    ctx.EmplaceState(p);
    ctx.SetOutput(0, data.dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Plan& p = ctx.state<Plan>();
    const int64_t dim = p.dim, n = p.n, outer = p.outer, inner = p.inner;
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      const int64_t index = IndexAt(indices, j);
      int64_t i = index < 0 ? index + dim : index;
      if (i < 0 || i >= dim) i = NormalizeIndex(index, dim, ctx.Describe() + ": input 'indices'");  // throws
      idx[static_cast<size_t>(j)] = i;
    }
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const void* src = data.raw_data();
    void* dst = y.raw_data();
    DispatchElements(data.dtype(), "Gather", [&](auto acc) {  // checked by Prepare
      using A = decltype(acc);
      const int threads = A::kPacked ? 1 : ctx.threads();
      ParallelFor(threads, outer * n, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t k = begin; k < end; ++k) {
                      const int64_t o = k / n, j = k % n;
                      A::Copy(dst, k * inner, src, (o * dim + idx[static_cast<size_t>(j)]) * inner, inner);
                    }
                  });
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Add({.op = "Gather",
         .since = 1,
         .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Gather>});
}

}  // namespace ferry::ref
