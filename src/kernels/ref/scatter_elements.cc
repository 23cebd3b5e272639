// ScatterElements (and the deprecated Scatter, opsets 9-10): a copy of `data` where each updates[i] is written
// (or combined per `reduction`, opset 16+) at i with coordinate `axis` replaced by indices[i]. Negative indices
// count from the end; out-of-range ones are an InvalidArgumentError. Duplicates apply in order.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/scatter_reduction.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ScatterElements : public OpKernel {
 public:
  explicit ScatterElements(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)), reduction_(ParseScatterReduction(node)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const std::string what = ctx.Describe() + ": input 'indices'";
    CheckIndexType(indices, what);
    const int64_t rank = data.rank();
    if (rank == 0 || indices.rank() != rank || indices.shape() != updates.shape() ||
        updates.dtype() != data.dtype()) {
      throw InvalidArgumentError(ctx.Describe() + ": indices " + DescribeTensor(indices) + " and updates " +
                                 DescribeTensor(updates) + " must have one shape, of the rank of data " +
                                 DescribeTensor(data) + " (>= 1)");
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && indices.dim(d) > data.dim(d)) {
        throw InvalidArgumentError(what + " " + DescribeTensor(indices) + " is larger than input 'data' " +
                                   DescribeTensor(data) + " in dimension " + std::to_string(d));
      }
    }
    Tensor& y = ctx.Output(0, data.dtype(), data.shape());
    CopyElements(data.dtype(), y.raw_data(), 0, data.raw_data(), 0, data.size());
    const int64_t n = indices.size();
    if (n == 0) return;
    // Validate every index before writing so a bad one leaves no half-applied update behind.
    const int64_t dim = data.dim(axis);
    for (int64_t p = 0; p < n; ++p) NormalizeIndex(IndexAt(indices, p), dim, what);
    const std::vector<int64_t> ds = Strides(data.shape());
    DispatchScatterUpdate(data.dtype(), reduction_, ctx.Describe(), [&](auto update) {
      std::vector<int64_t> cnt(static_cast<size_t>(rank), 0);
      int64_t base = 0;  // output offset of the current position, without the axis coordinate
      for (int64_t p = 0; p < n; ++p) {
        int64_t j = IndexAt(indices, p);
        if (j < 0) j += dim;
        update(y.raw_data(), base + j * ds[static_cast<size_t>(axis)], updates.raw_data(), p);
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
  ScatterReduction reduction_;
};

}  // namespace

void RegisterScatterElementsKernels(KernelRegistry& r) {
  const std::vector<DataType> tind = {DataType::kInt32, DataType::kInt64};
  r.Add({.op = "Scatter",
         .since = 9,
         .types = {{"T", dtypes::All()}, {"Tind", tind}},
         .create = MakeKernel<ScatterElements>});
  r.Add({.op = "ScatterElements",
         .since = 11,
         .types = {{"T", dtypes::All()}, {"Tind", tind}},
         .create = MakeKernel<ScatterElements>});
}

}  // namespace ferry::ref
