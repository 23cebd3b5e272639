// ai.ferry FusedMatMul (schemas_ferry.cc): Y = act(MatMul(A, B) + C), computed exactly by that definition: the ref
// MatMul's float path (PlanMatMul, MatMulF32 in matmul.cc), then C added to every row, then the fused activation
// (fused_activation.h) — the values MatMul, Add and the activation produce when run one after another.
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/fused_activation.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class FusedMatMul : public OpKernel {
 public:
  explicit FusedMatMul(const ir::Node& node) : act_(FusedActivation::FromNode(node)) {}

  // The product's geometry for these shapes, and GemmF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const char* const names[] = {"A", "B", "C"};
    for (int i = 0; i < 3; ++i) {
      const InputSpec& t = i < 2 ? ctx.tensor_input(i) : ctx.input(i);
      if (t.is_tensor() && t.dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": input " + names[i] + " (" + ctx.InputString(i) +
                                   ") is not float");
      }
    }
    const MatMulPlan& p = ctx.EmplaceState(PlanMatMul(ctx.input(0).shape, ctx.input(1).shape, ctx.Describe()));
    const InputSpec& c = ctx.input(2);
    if (c.is_tensor() && (c.shape.size() != 1 || c.shape[0] != p.n)) {
      throw InvalidArgumentError(ctx.Describe() + ": input C has shape " + ShapeToString(c.shape) + ", expected [" +
                                 std::to_string(p.n) + "] (B's column count, for " + ctx.InputString(1) + ")");
    }
    AddMatMulF32Workspace(p, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, DataType::kFloat, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const MatMulPlan& p = ctx.state<MatMulPlan>();
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    float* yp = y.data<float>();
    MatMulF32(p, a.data<float>(), b.data<float>(), yp, ctx.threads());
    if (c) {
      const float* cp = c->data<float>();
      const int64_t rows = y.size() / p.n;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < p.n; ++j) yp[r * p.n + j] += cp[j];
      }
    }
    act_.Apply(yp, y.size(), ctx.threads());
  }

 private:
  FusedActivation act_;
};

}  // namespace

void RegisterFusedMatMulKernels(KernelRegistry& r) {
  r.Add({.op = "FusedMatMul",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<FusedMatMul>});
}

}  // namespace ferry::ref
