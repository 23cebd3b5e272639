// Shape: the input's shape as a 1-D int64 tensor; from opset 15 the slice [start, end) of it (negative values
// count from the end, then clamp to [0, rank]).
#include <algorithm>
#include <optional>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(const ir::Node& node) : start_(node.GetInt("start", 0)) {
    if (node.has_attr("end")) end_ = node.GetInt("end", 0);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_);
    const int64_t end = end_ ? clamp(*end_) : rank;
    const int64_t n = std::max<int64_t>(0, end - start);
    Tensor& y = ctx.Output(0, DataType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x.dim(start + i);
  }

 private:
  int64_t start_ = 0;
  std::optional<int64_t> end_;
};

}  // namespace

void RegisterShapeKernels(KernelRegistry& r) {
  r.Add({.op = "Shape", .since = 1, .types = {{"T", dtypes::All()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<ShapeOp>});
}

}  // namespace ferry::ref
