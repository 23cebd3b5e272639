// Where (opset 9, 16): out = condition ? X : Y with numpy broadcasting of all three inputs; any type (a pure
// selection, so complex64/complex128 too). Prepare checks the types and plans the broadcast.
#include <utility>

#include "kernels/kernel_def.h"
#include "kernels/ref/complex_types.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Where : public OpKernel {
 public:
  explicit Where(const ir::Node&) {}

  // The inputs' types, their broadcast shape and its walk.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& c = ctx.tensor_input(0);
    const InputSpec& x = ctx.tensor_input(1);
    const InputSpec& y = ctx.tensor_input(2);
    if (c.dtype != DataType::kBool) {
      throw InvalidArgumentError(ctx.Describe() + ": condition must be bool, got " + ctx.InputString(0));
    }
    if (x.dtype != y.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": X and Y have different types " +
                                 std::string(DataTypeName(x.dtype)) + " and " + std::string(DataTypeName(y.dtype)) +
                                 " (" + ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
    }
    Shape out_shape = BroadcastShapes({c.shape, x.shape, y.shape}, ctx.Describe());
    ctx.EmplaceState(BroadcastPlan<3>({&c.shape, &x.shape, &y.shape}, out_shape));
    ctx.SetOutput(0, x.dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& c = ctx.required_input(0);
    const Tensor& x = ctx.required_input(1);
    const Tensor& y = ctx.required_input(2);
    Tensor& out = ctx.Output(0);
    const int64_t n = out.size();
    if (n == 0) return;
    Dispatch(AllTypesWithComplex{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const bool* pc = c.data<bool>();
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = out.data<T>();
      if (c.size() == n && x.size() == n && y.size() == n) {
        ParallelFor(ctx.threads(), n, kElementwiseGrain, [&](int64_t s, int64_t e) {
          for (int64_t i = s; i < e; ++i) po[i] = pc[i] ? px[i] : py[i];
        });
        return;
      }
      const BroadcastPlan<3>& plan = ctx.state<BroadcastPlan<3>>();
      const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
      plan.ForEachRow(ctx.threads(), [&](int64_t o, const std::array<int64_t, 3>& off, int64_t count) {
        for (int64_t i = 0; i < count; ++i) {
          po[o + i] = pc[off[0] + i * sc] ? px[off[1] + i * sx] : py[off[2] + i * sy];
        }
      });
    });
  }
};

}  // namespace

void RegisterWhereKernels(KernelRegistry& r) {
  // Versions 9 and 16 (bfloat16).
  r.Add({.op = "Where",
         .since = 9,
         .types = {{"B", {DataType::kBool}},
                   {"T", dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                             DataType::kComplex128})}},
         .create = MakeKernel<Where>});
}

}  // namespace ferry::ref
