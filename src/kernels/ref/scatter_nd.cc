// ScatterND: a copy of `data` where each length-k index tuple in the last dimension of `indices` selects a
// slice data[tuple] that is overwritten (or combined per `reduction`, opset 16+) with the matching slice of
// `updates` (shape indices.shape[:-1] + data.shape[k:]). Negative indices count from the end.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/scatter_reduction.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ScatterND : public OpKernel {
 public:
  explicit ScatterND(const ir::Node& node) : reduction_(ParseScatterReduction(node)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const std::string what = ctx.Describe() + ": input 'indices'";
    CheckIndexType(indices, what);
    const int64_t r = data.rank(), q = indices.rank();
    if (r < 1 || q < 1 || indices.dim(q - 1) > r) {
      throw InvalidArgumentError(what + " " + DescribeTensor(indices) + " does not index data " +
                                 DescribeTensor(data));
    }
    const int64_t k = indices.dim(q - 1);
    Shape want(indices.shape().begin(), indices.shape().end() - 1);
    want.insert(want.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != want || updates.dtype() != data.dtype()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'updates' " + DescribeTensor(updates) + " must be " +
                                 std::string(DataTypeName(data.dtype())) + ShapeToString(want));
    }
    Tensor& y = ctx.Output(0, data.dtype(), data.shape());
    CopyElements(data.dtype(), y.raw_data(), 0, data.raw_data(), 0, data.size());
    int64_t tuples = 1, slice = 1;
    for (int64_t d = 0; d < q - 1; ++d) tuples *= indices.dim(d);
    for (int64_t d = k; d < r; ++d) slice *= data.dim(d);
    const std::vector<int64_t> ds = Strides(data.shape());
    std::vector<int64_t> offsets(static_cast<size_t>(tuples), 0);
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        offsets[static_cast<size_t>(t)] +=
            NormalizeIndex(IndexAt(indices, t * k + j), data.dim(j), what) * ds[static_cast<size_t>(j)];
      }
    }
    DispatchScatterUpdate(data.dtype(), reduction_, ctx.Describe(), [&](auto update) {
      for (int64_t t = 0; t < tuples; ++t) {
        const int64_t off = offsets[static_cast<size_t>(t)];
        for (int64_t e = 0; e < slice; ++e) update(y.raw_data(), off + e, updates.raw_data(), t * slice + e);
      }
    });
  }

 private:
  ScatterReduction reduction_;
};

}  // namespace

void RegisterScatterNDKernels(KernelRegistry& r) {
  r.Add({.op = "ScatterND", .since = 11, .types = {{"T", dtypes::All()}}, .create = MakeKernel<ScatterND>});
}

}  // namespace ferry::ref
