// ai.ferry FusedMatMul (schemas_ferry.cc): Y = act(MatMul(A, B) + C), computed exactly by that definition: the ref
// MatMul's float path (PlanMatMul, MatMulF32 in matmul.cc), then C added to every row, then the fused activation
// (fused_activation.h) — the values MatMul, Add and the activation produce when run one after another.
#include <string>
#include <utility>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/fused_activation.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "kernels/static_shape.h"

namespace ferry::ref {
namespace {

class FusedMatMul : public OpKernel {
 public:
  explicit FusedMatMul(const ir::Node& node) : act_(FusedActivation::FromNode(node)) {}

  // GemmF32's packing panels at the node's static shapes.
  void AddWorkspace(const ir::Node& node, int threads, Workspace& ws) const override {
    const auto a = StaticShape(node, 0), b = StaticShape(node, 1);
    if (!a || !b || node.input(0)->type().elem_type != DataType::kFloat) return;
    try {
      AddMatMulF32Workspace(PlanMatMul(*a, *b, node.Describe()), threads, ws);
    } catch (const InvalidArgumentError&) {  // a shape error, left for Compute to report
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const std::string what = ctx.Describe();
    const std::pair<const Tensor*, const char*> typed[] = {{&a, "A"}, {&b, "B"}, {c, "C"}};
    for (const auto& [t, name] : typed) {
      if (t && t->dtype() != DataType::kFloat) {
        throw InvalidArgumentError(what + ": input " + name + " has type " + std::string(DataTypeName(t->dtype())) +
                                   ", expected float");
      }
    }
    const MatMulPlan p = PlanMatMul(a.shape(), b.shape(), what);
    if (c && (c->rank() != 1 || c->dim(0) != p.n)) {
      throw InvalidArgumentError(what + ": input C has shape " + ShapeToString(c->shape()) + ", expected [" +
                                 std::to_string(p.n) + "] (B's column count, for B " + ShapeToString(b.shape()) + ")");
    }
    Tensor& y = ctx.Output(0, DataType::kFloat, p.out_shape);
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
