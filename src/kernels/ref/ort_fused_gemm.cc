// com.microsoft FusedGemm (schemas_com_microsoft_fused.cc): Y = act(alpha * op(A) * op(B) + beta * C), Gemm's
// definition (transA, transB, C unidirectionally broadcast to [M, N]) followed by ONNX Runtime's activation
// functor named by `activation` with `activation_alpha/beta/gamma` (semantics/ort_gemm_activation.h: the
// vocabulary, the formulas and the defaults). float32 only, as ONNX Runtime's CPU kernel: GemmF32 into Y
// (holding C), then the activation over every element.
#include <string>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "semantics/gemm.h"
#include "semantics/ort_gemm_activation.h"

namespace ferry::ref {
namespace {

class FusedGemm : public OpKernel {
 public:
  explicit FusedGemm(const ir::Node& node)
      : trans_a_(node.GetInt("transA", 0) != 0),
        trans_b_(node.GetInt("transB", 0) != 0),
        alpha_(node.GetFloat("alpha", 1.0f)),
        beta_(node.GetFloat("beta", 1.0f)),
        act_(semantics::OrtGemmActivationFromNode(node)) {}

  // A, B and C float32 of Gemm's shapes; GemmF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const char* const names[] = {"A", "B", "C"};
    for (int i = 0; i < 3; ++i) {
      const InputSpec& t = i < 2 ? ctx.tensor_input(i) : ctx.input(i);
      if (t.is_tensor() && t.dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": input " + names[i] + " (" + ctx.InputString(i) +
                                   ") is not float32");
      }
    }
    const InputSpec& c = ctx.input(2);
    const semantics::GemmShape& g = ctx.EmplaceState(semantics::ResolveGemm(ctx.input(0).shape, ctx.input(1).shape,
                                                                            c.is_tensor() ? &c.shape : nullptr,
                                                                            trans_a_, trans_b_, ctx.Describe()));
    if (alpha_ != 0.0f) AddGemmF32Workspace(g.m, g.n, g.k, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, DataType::kFloat, {g.m, g.n});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const semantics::GemmShape& g = ctx.state<semantics::GemmShape>();
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    float* yp = y.data<float>();
    const bool use_c = c && beta_ != 0.0f;
    if (use_c) {
      const float* cp = c->data<float>();
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) yp[i * g.n + j] = cp[i * g.c_row_stride + j * g.c_col_stride];
    }
    GemmF32(trans_a_, trans_b_, g.m, g.n, g.k, alpha_, a.data<float>(), a.dim(1), b.data<float>(), b.dim(1),
            use_c ? beta_ : 0.0f, yp, g.n, ctx.threads());
    if (act_.kind == semantics::OrtGemmActivationKind::kNone) return;
    const semantics::OrtGemmActivation act = act_;
    ParallelFor(ctx.threads(), y.size(), 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) yp[i] = semantics::ApplyOrtGemmActivation(act, yp[i]);
    });
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  semantics::OrtGemmActivation act_;
};

}  // namespace

void RegisterOrtFusedGemmKernels(KernelRegistry& r) {
  r.Add({.op = "FusedGemm",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<FusedGemm>,
         .predicate = [](const ir::Node& n) -> std::string {
           semantics::OrtGemmActivation act;
           return semantics::ParseOrtGemmActivation(n, &act);
         },
         .constraints = "float32; activation one of ONNX Runtime's Gemm functors"});
}

}  // namespace ferry::ref
