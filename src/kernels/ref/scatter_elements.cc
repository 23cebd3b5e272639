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

  // The shape and dtype checks, the resolved axis and data's strides; the indices' values are data.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    const InputSpec& updates = ctx.tensor_input(2);
    const std::string what = ctx.Describe() + ": input 'indices'";
    auto str = [](const InputSpec& t) { return std::string(DataTypeName(t.dtype)) + ShapeToString(t.shape); };
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(what + ": expected an int32 or int64 tensor, got " + str(indices));
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0 || static_cast<int64_t>(indices.shape.size()) != rank || indices.shape != updates.shape ||
        updates.dtype != data.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": indices " + str(indices) + " and updates " + str(updates) +
                                 " must have one shape, of the rank of data " + str(data) + " (>= 1)");
    }
    Plan p;
    p.axis = NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<size_t>(d);
      if (d != p.axis && indices.shape[u] > data.shape[u]) {
        throw InvalidArgumentError(what + " " + str(indices) + " is larger than input 'data' " + str(data) +
                                   " in dimension " + std::to_string(d));
      }
    }
    if (ShapeElementCount(indices.shape) > 0) {  // the update's dtype rule (DispatchScatterUpdate's)
      DispatchScatterUpdate(data.dtype, reduction_, ctx.Describe(), [](auto) {});
    }
    p.dim = data.shape[static_cast<size_t>(p.axis)];
    p.strides = Strides(data.shape);
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, data.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const Plan& plan = ctx.state<Plan>();
    const int64_t rank = data.rank();
    const int64_t axis = plan.axis;
    Tensor& y = ctx.Output(0);
    CopyElements(data.dtype(), y.raw_data(), 0, data.raw_data(), 0, data.size());
    const int64_t n = indices.size();
    if (n == 0) return;
    // Validate every index before writing so a bad one leaves no half-applied update behind.
    const int64_t dim = plan.dim;
    for (int64_t p = 0; p < n; ++p) {
      const int64_t j = IndexAt(indices, p);
      if (j < -dim || j >= dim) NormalizeIndex(j, dim, ctx.Describe() + ": input 'indices'");  // throws
    }
    const std::vector<int64_t>& ds = plan.strides;
    DispatchScatterUpdate(data.dtype(), reduction_, ctx.node().op_type(), [&](auto update) {
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
  struct Plan {
    int64_t axis = 0;              // the scattered axis, resolved
    int64_t dim = 0;               // data's size along it
    std::vector<int64_t> strides;  // data's row-major strides
  };
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
