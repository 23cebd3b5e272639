// OneHot: Y has a new dimension of size `depth` at `axis`; every element is values[0] (off) except
// Y[..., indices[...], ...] = values[1] (on). Negative indices count from the end; indices outside [-depth, depth)
// give an all-off row, as the spec requires (and ref does). Indices of any numeric type are read as ref reads them
// (ReadIntegers: a NaN is the data's error, naming the node). Y is one parallel fill of the off value, then one
// store of the on value per index, as storage words by element size (any byte-sized values type). The depth
// (read on the host) is resolved in Prepare when it is a constant, else Compute reads it (Y is then dynamic).
#include <string>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/one_hot.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct OneHotPlan {
  int64_t axis = 0;    // the new dimension's place in Y
  int64_t inner = 1;   // elements of indices after the axis
  int64_t depth = -1;  // the constant depth, or -1: read it in Compute
  int elem = 0;
};

class OneHot : public OpKernel {
 public:
  explicit OneHot(const ir::Node& node) : axis_(node.GetInt("axis", -1)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& indices = ctx.tensor_input(0);
    const InputSpec& depth_t = ctx.tensor_input(1);
    const InputSpec& values = ctx.tensor_input(2);
    if (ShapeElementCount(depth_t.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'depth': expected a scalar, got " +
                                 std::string(DataTypeName(depth_t.dtype)) + ShapeToString(depth_t.shape));
    }
    if (ShapeElementCount(values.shape) != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'values' must hold [off_value, on_value], got " +
                                 std::string(DataTypeName(values.dtype)) + ShapeToString(values.shape));
    }
    OneHotPlan p;
    p.axis = ref::NormalizeAxis(axis_, static_cast<int64_t>(indices.shape.size()) + 1, ctx.Describe());
    for (size_t d = static_cast<size_t>(p.axis); d < indices.shape.size(); ++d) p.inner *= indices.shape[d];
    p.elem = ElementBytes(values.dtype);
    if (const Tensor* t = ctx.constant(1)) {
      p.depth = ref::ResolveOneHotDepth(*t, ctx);
      ctx.SetOutput(0, values.dtype, ref::OneHotShape(indices.shape, p.axis, p.depth));
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& indices = ctx.required_input(0);
    const Tensor& values = ctx.required_input(2);
    const OneHotPlan& p = ctx.state<OneHotPlan>();
    const int64_t depth = p.depth > 0 ? p.depth : ref::ResolveOneHotDepth(ctx.required_input(1), ctx);
    const std::vector<int64_t> idx =
        ref::OneHotNaming(ctx, ": input 'indices'", [&] { return ref::ReadIntegers(indices, std::string()); });
    Tensor& y = p.depth > 0
                    ? ctx.OutputUninitialized(0)
                    : ctx.OutputUninitialized(0, values.dtype(), ref::OneHotShape(indices.shape(), p.axis, depth));
    if (y.size() == 0) return;
    ParallelFill(p.elem, y.raw_data(), y.size(), values.raw_data(), CopyThreads(ctx.threads(), y.size() * p.elem));
    const int64_t inner = p.inner;
    DispatchWord(p.elem, [&](auto tag) {
      using W = decltype(tag);
      W* out = static_cast<W*>(y.raw_data());
      const W on = static_cast<const W*>(values.raw_data())[1];
      for (size_t q = 0; q < idx.size(); ++q) {
        const int64_t v = idx[q] < 0 ? idx[q] + depth : idx[q];
        if (v < 0 || v >= depth) continue;
        const int64_t o = static_cast<int64_t>(q) / inner, i = static_cast<int64_t>(q) % inner;
        out[(o * depth + v) * inner + i] = on;
      }
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterOneHotKernels(KernelRegistry& r) {
  r.Add({.op = "OneHot",
         .since = 9,
         .types = {{"T1", dtypes::Numeric()}, {"T2", dtypes::Numeric()}, {"T3", ByteSizedTypes()}},
         .create = MakeKernel<OneHot>,
         .host_inputs = {1},
         .name = "cpu.any_one_hot__fill.9"});
}

}  // namespace ferry::cpu
