// Gather: out[o, j..., i] = data[o, indices[j...], i] along `axis` (negative indices count from the end; an
// index outside [-dim, dim) is an InvalidArgumentError). Rows of the inner dimensions move as block copies.
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

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const std::string what = ctx.Describe() + ": input 'indices'";
    CheckIndexType(indices, what);
    const int64_t rank = data.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'data' must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    const int64_t dim = data.dim(axis);
    const int64_t n = indices.size();
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) idx[static_cast<size_t>(j)] = NormalizeIndex(IndexAt(indices, j), dim, what);

    Shape out_shape(data.shape().begin(), data.shape().begin() + axis);
    out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
    out_shape.insert(out_shape.end(), data.shape().begin() + axis + 1, data.shape().end());
    Tensor& y = ctx.Output(0, data.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= data.dim(d);
      if (d > axis) inner *= data.dim(d);
    }
    if (y.size() == 0) return;
    const void* src = data.raw_data();
    void* dst = y.raw_data();
    DispatchElements(data.dtype(), ctx.Describe(), [&](auto acc) {
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
