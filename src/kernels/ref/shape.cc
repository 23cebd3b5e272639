// Shape: the input's shape as a 1-D int64 tensor; from opset 15 the slice [start, end) of it (negative values
// count from the end, then clamp to [0, rank]). Prepare computes it
// (OutputSpec::value); Compute copies it into the output.
#include <algorithm>
#include <optional>
#include <utility>

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
  // Y is known from X's shape alone: Prepare declares its data, so the nodes reading it are prepared for the value.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const auto rank = static_cast<int64_t>(x.shape.size());
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_);
    const int64_t end = end_ ? clamp(*end_) : rank;
    const int64_t n = std::max<int64_t>(0, end - start);
    Tensor y(DataType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x.shape[static_cast<size_t>(start + i)];
    ctx.SetOutputValue(0, std::move(y));
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& v = *ctx.prepared_output(0)->value;
    Tensor& y = ctx.OutputUninitialized(0);
    std::copy(v.data<int64_t>(), v.data<int64_t>() + v.size(), y.data<int64_t>());
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
