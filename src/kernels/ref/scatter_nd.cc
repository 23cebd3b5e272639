// ScatterND: a copy of `data` where each length-k index tuple in the last dimension of `indices` selects a
// slice data[tuple] that is overwritten (or combined per `reduction`, opset 16+) with the matching slice of
// `updates` (shape indices.shape[:-1] + data.shape[k:]). Negative indices count from the end. Prepare
// checks the shapes and dtypes; Compute checks the index values.
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/scatter_reduction.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The index tuples' length k, how many there are, the elements each selects, and data's strides.
struct Plan {
  int64_t k = 0, tuples = 1, slice = 1;
  std::vector<int64_t> strides;
};

class ScatterND : public OpKernel {
 public:
  explicit ScatterND(const ir::Node& node) : reduction_(ParseScatterReduction(node)) {}

  // Every check of data, indices and updates, and the loop bounds.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    const InputSpec& updates = ctx.tensor_input(2);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    const auto r = static_cast<int64_t>(data.shape.size()), q = static_cast<int64_t>(indices.shape.size());
    if (r < 1 || q < 1 || indices.shape[static_cast<size_t>(q - 1)] > r) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) + " does not index data " +
                                 ctx.InputString(0));
    }
    Plan p;
    p.k = indices.shape[static_cast<size_t>(q - 1)];
    Shape want(indices.shape.begin(), indices.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + p.k, data.shape.end());
    if (updates.shape != want || updates.dtype != data.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'updates' " + ctx.InputString(2) + " must be " +
                                 std::string(DataTypeName(data.dtype)) + ShapeToString(want));
    }
    DispatchScatterUpdate(data.dtype, reduction_, ctx.Describe(), [](auto) {});  // the dtype suits the reduction
    for (int64_t d = 0; d < q - 1; ++d) p.tuples *= indices.shape[static_cast<size_t>(d)];
    for (int64_t d = p.k; d < r; ++d) p.slice *= data.shape[static_cast<size_t>(d)];
    p.strides = Strides(data.shape);
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, data.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const Plan& p = ctx.state<Plan>();
    const int64_t k = p.k, tuples = p.tuples, slice = p.slice;
    Tensor& y = ctx.Output(0);
    CopyElements(data.dtype(), y.raw_data(), 0, data.raw_data(), 0, data.size());
    std::vector<int64_t> offsets(static_cast<size_t>(tuples), 0);
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const int64_t index = IndexAt(indices, t * k + j), dim = data.dim(j);
        int64_t i = index < 0 ? index + dim : index;
        if (i < 0 || i >= dim) i = NormalizeIndex(index, dim, ctx.Describe() + ": input 'indices'");  // throws
        offsets[static_cast<size_t>(t)] += i * p.strides[static_cast<size_t>(j)];
      }
    }
    // Prepare checked that the dtype suits the reduction: the description is never used.
    DispatchScatterUpdate(data.dtype(), reduction_, std::string(), [&](auto update) {
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
