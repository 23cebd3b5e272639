// GatherND: each length-k index tuple in the last dimension of `indices` selects a slice of `data` (after
// batch_dims leading batch dimensions shared by both). out shape = indices.shape[:-1] + data.shape[b+k:].
// Prepare checks the shapes and resolves the geometry; an index out of range is Compute's error (data).
#include <algorithm>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/gather_nd.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class GatherND : public OpKernel {
 public:
  explicit GatherND(const ir::Node& node) : batch_dims_(node.GetInt("batch_dims", 0)) {
    if (batch_dims_ < 0) throw InvalidModelError(node.Describe() + ": batch_dims must be >= 0");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    GatherNDGeometry p = ResolveGatherND(ctx, batch_dims_);
    DispatchElements(data.dtype, ctx.Describe(), [](auto) {});  // a type with a storage layout
    Shape out_shape = p.out_shape;
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const GatherNDGeometry& p = ctx.state<GatherNDGeometry>();
    Tensor& y = ctx.Output(0);
    const int64_t b = batch_dims_, k = p.k, batches = p.batches, tuples = p.tuples, slice = p.slice;
    const int64_t batch_stride = p.batch_stride;
    const std::vector<int64_t>& ds = p.strides;
    DispatchElements(data.dtype(), "GatherND", [&](auto acc) {  // checked by Prepare
      using A = decltype(acc);
      for (int64_t bi = 0; bi < batches; ++bi) {
        for (int64_t t = 0; t < tuples; ++t) {
          const int64_t row = bi * tuples + t;
          int64_t off = bi * batch_stride;
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dim = data.dim(b + j);
            const int64_t index = IndexAt(indices, row * k + j);
            int64_t i = index < 0 ? index + dim : index;
            if (i < 0 || i >= dim) i = NormalizeIndex(index, dim, ctx.Describe() + ": input 'indices'");  // throws
            off += i * ds[static_cast<size_t>(b + j)];
          }
          A::Copy(y.raw_data(), row * slice, data.raw_data(), off, slice);
        }
      }
    });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

GatherNDGeometry ResolveGatherND(const PrepareContext& ctx, int64_t batch_dims) {
  const InputSpec& data = ctx.tensor_input(0);
  const InputSpec& indices = ctx.tensor_input(1);
  if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                               ctx.InputString(1));
  }
  const Shape& ds = data.shape;
  const Shape& is = indices.shape;
  const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size()), b = batch_dims;
  if (r < 1 || q < 1 || b >= std::min(r, q)) {
    throw InvalidArgumentError(ctx.Describe() + ": batch_dims=" + std::to_string(b) + " needs data " +
                               ctx.InputString(0) + " and indices " + ctx.InputString(1) + " of rank > batch_dims");
  }
  const int64_t k = is[static_cast<size_t>(q - 1)];
  if (k > r - b) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) +
                               ": index tuples of length " + std::to_string(k) + " exceed the rank of data " +
                               ctx.InputString(0));
  }
  for (int64_t d = 0; d < b; ++d) {
    if (ds[static_cast<size_t>(d)] != is[static_cast<size_t>(d)]) {
      throw InvalidArgumentError(ctx.Describe() + ": batch dimension " + std::to_string(d) + " differs between data " +
                                 ctx.InputString(0) + " and indices " + ctx.InputString(1));
    }
  }
  GatherNDGeometry p;
  p.out_shape.assign(is.begin(), is.end() - 1);
  p.out_shape.insert(p.out_shape.end(), ds.begin() + b + k, ds.end());
  p.b = b;
  p.k = k;
  for (int64_t d = 0; d < b; ++d) p.batches *= is[static_cast<size_t>(d)];
  for (int64_t d = b; d < q - 1; ++d) p.tuples *= is[static_cast<size_t>(d)];
  for (int64_t d = b + k; d < r; ++d) p.slice *= ds[static_cast<size_t>(d)];
  p.dims = ds;
  p.strides = Strides(ds);
  p.batch_stride = b > 0 ? p.strides[static_cast<size_t>(b - 1)] : 0;
  return p;
}

void RegisterGatherNDKernels(KernelRegistry& r) {
  r.Add({.op = "GatherND",
         .since = 11,
         .types = {{"T", dtypes::All()}},
         .create = MakeKernel<GatherND>});
}

}  // namespace ferry::ref
