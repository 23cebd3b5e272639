// ai.ferry ScaleShift (schemas_ferry.cc): Y = act(Add(Mul(X, scale), shift)), computed by that definition: the
// product rounded to float, then the sum, then the fused activation (fused_activation.h) — the values Mul, Add and
// the activation produce when run one after another. scale and shift broadcast numpy-style to X's shape.
#include <array>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/fused_activation.h"
#include "kernels/ref/scale_shift.h"
#include "kernels/registry.h"
#include "semantics/broadcast.h"

namespace ferry::ref {

void PrepareScaleShiftOutput(PrepareContext& ctx) {
  const char* const names[] = {"X", "scale", "shift"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.tensor_input(i).dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input " + names[i] + " (" + ctx.InputString(i) +
                                 ") is not float32");
    }
  }
  const Shape& x = ctx.input(0).shape;
  for (int i = 1; i < 3; ++i) {
    if (!semantics::BroadcastsTo(ctx.input(i).shape, x)) {
      throw InvalidArgumentError(ctx.Describe() + ": input " + names[i] + " (" + ctx.InputString(i) +
                                 ") does not broadcast to X's shape " + ShapeToString(x));
    }
  }
  ctx.SetOutput(0, DataType::kFloat, x);
}

namespace {

class ScaleShift : public OpKernel {
 public:
  explicit ScaleShift(const ir::Node& node) : act_(FusedActivation::FromNode(node)) {}

  void Prepare(PrepareContext& ctx) const override { PrepareScaleShiftOutput(ctx); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& s = ctx.required_input(1);
    const Tensor& t = ctx.required_input(2);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* px = x.data<float>();
    const float* ps = s.data<float>();
    const float* pt = t.data<float>();
    float* py = y.data<float>();
    BroadcastPlan<3> plan({&x.shape(), &s.shape(), &t.shape()}, x.shape());
    const int64_t sx = plan.inner_stride(0), ss = plan.inner_stride(1), st = plan.inner_stride(2);
    plan.ForEachRow(ctx.threads(), [&](int64_t o, const std::array<int64_t, 3>& off, int64_t count) {
      for (int64_t i = 0; i < count; ++i) {
        const float product = px[off[0] + i * sx] * ps[off[1] + i * ss];
        py[o + i] = product + pt[off[2] + i * st];
      }
    });
    act_.Apply(py, y.size(), ctx.threads());
  }

 private:
  FusedActivation act_;
};

}  // namespace

void RegisterScaleShiftKernels(KernelRegistry& r) {
  r.Add({.op = "ScaleShift",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<ScaleShift>});
}

}  // namespace ferry::ref
