// GatherND: each length-k index tuple in the last dimension of `indices` selects a slice of `data` (after
// batch_dims leading batch dimensions shared by both). out shape = indices.shape[:-1] + data.shape[b+k:].
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class GatherND : public OpKernel {
 public:
  explicit GatherND(const ir::Node& node) : batch_dims_(node.GetInt("batch_dims", 0)) {
    if (batch_dims_ < 0) throw InvalidModelError(node.Describe() + ": batch_dims must be >= 0");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const std::string what = ctx.Describe() + ": input 'indices'";
    CheckIndexType(indices, what);
    const int64_t r = data.rank(), q = indices.rank(), b = batch_dims_;
    if (r < 1 || q < 1 || b >= std::min(r, q)) {
      throw InvalidArgumentError(ctx.Describe() + ": batch_dims=" + std::to_string(b) + " needs data " +
                                 DescribeTensor(data) + " and indices " + DescribeTensor(indices) +
                                 " of rank > batch_dims");
    }
    const int64_t k = indices.dim(q - 1);
    if (k > r - b) {
      throw InvalidArgumentError(what + " " + DescribeTensor(indices) + ": index tuples of length " +
                                 std::to_string(k) + " exceed the rank of data " + DescribeTensor(data));
    }
    for (int64_t d = 0; d < b; ++d) {
      if (data.dim(d) != indices.dim(d)) {
        throw InvalidArgumentError(ctx.Describe() + ": batch dimension " + std::to_string(d) + " differs between data " +
                                   DescribeTensor(data) + " and indices " + DescribeTensor(indices));
      }
    }
    Shape out_shape(indices.shape().begin(), indices.shape().end() - 1);
    out_shape.insert(out_shape.end(), data.shape().begin() + b + k, data.shape().end());
    Tensor& y = ctx.Output(0, data.dtype(), out_shape);
    int64_t batches = 1, tuples = 1, slice = 1;
    for (int64_t d = 0; d < b; ++d) batches *= indices.dim(d);
    for (int64_t d = b; d < q - 1; ++d) tuples *= indices.dim(d);
    for (int64_t d = b + k; d < r; ++d) slice *= data.dim(d);
    const std::vector<int64_t> ds = Strides(data.shape());
    const int64_t batch_stride = b > 0 ? ds[static_cast<size_t>(b - 1)] : 0;
    DispatchElements(data.dtype(), ctx.Describe(), [&](auto acc) {
      using A = decltype(acc);
      for (int64_t bi = 0; bi < batches; ++bi) {
        for (int64_t t = 0; t < tuples; ++t) {
          const int64_t row = bi * tuples + t;
          int64_t off = bi * batch_stride;
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dim = data.dim(b + j);
            off += NormalizeIndex(IndexAt(indices, row * k + j), dim, what) * ds[static_cast<size_t>(b + j)];
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

void RegisterGatherNDKernels(KernelRegistry& r) {
  r.Add({.op = "GatherND",
         .since = 11,
         .types = {{"T", dtypes::All()}},
         .create = MakeKernel<GatherND>});
}

}  // namespace ferry::ref
