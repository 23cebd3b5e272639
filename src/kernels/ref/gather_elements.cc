// GatherElements: out[i] = data[i with coordinate `axis` replaced by indices[i]]; out has the indices' shape.
// Negative indices count from the end; out-of-range ones are an InvalidArgumentError.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class GatherElements : public OpKernel {
 public:
  explicit GatherElements(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const std::string what = ctx.Describe() + ": input 'indices'";
    CheckIndexType(indices, what);
    const int64_t rank = data.rank();
    if (rank == 0 || indices.rank() != rank) {
      throw InvalidArgumentError(what + " " + DescribeTensor(indices) + " must have the rank of input 'data' " +
                                 DescribeTensor(data) + " (>= 1)");
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && indices.dim(d) > data.dim(d)) {
        throw InvalidArgumentError(what + " " + DescribeTensor(indices) + " is larger than input 'data' " +
                                   DescribeTensor(data) + " in dimension " + std::to_string(d));
      }
    }
    Tensor& y = ctx.Output(0, data.dtype(), indices.shape());
    const int64_t n = indices.size();
    if (n == 0) return;
    const std::vector<int64_t> ds = Strides(data.shape());
    const int64_t dim = data.dim(axis);
    DispatchElements(data.dtype(), ctx.Describe(), [&](auto acc) {
      using A = decltype(acc);
      std::vector<int64_t> cnt(static_cast<size_t>(rank), 0);
      int64_t base = 0;  // data offset of the current position, without the axis coordinate
      for (int64_t p = 0; p < n; ++p) {
        const int64_t j = NormalizeIndex(IndexAt(indices, p), dim, what);
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
