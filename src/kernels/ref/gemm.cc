// Gemm: Y = alpha · op(A) · op(B) + beta · C, with op = transpose when transA/transB is set and C (optional from
// opset 11) broadcast to [M, N]. The legacy `broadcast` attribute (opsets 1-6) is accepted; C is always
// broadcast. float runs GemmF32; float16/bfloat16 compute through float; double and integers use the plain loop.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "semantics/gemm.h"

namespace ferry::ref {
namespace {

class Gemm : public OpKernel {
 public:
  explicit Gemm(const ir::Node& node)
      : trans_a_(node.GetInt("transA", 0) != 0),
        trans_b_(node.GetInt("transB", 0) != 0),
        alpha_(node.GetFloat("alpha", 1.0f)),
        beta_(node.GetFloat("beta", 1.0f)) {}

  // The product's geometry for these shapes, and GemmF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const InputSpec& c = ctx.input(2);
    const bool with_c = c.is_tensor();
    if (a.shape.size() == 2 && b.shape.size() == 2 && (a.dtype != b.dtype || (with_c && c.dtype != a.dtype))) {
      throw InvalidArgumentError(ctx.Describe() + ": A, B and C must have the same element type, got " +
                                 ctx.InputString(0) + ", " + ctx.InputString(1) + ", " + ctx.InputString(2));
    }
    const semantics::GemmShape& g = ctx.EmplaceState(
        semantics::ResolveGemm(a.shape, b.shape, with_c ? &c.shape : nullptr, trans_a_, trans_b_, ctx.Describe()));
    if (alpha_ != 0.0f && GemmsAsFloat(a.dtype)) AddGemmF32Workspace(g.m, g.n, g.k, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, a.dtype, {g.m, g.n});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const semantics::GemmShape& g = ctx.state<semantics::GemmShape>();
    const int64_t m = g.m, k = g.k, n = g.n;
    const int64_t c_row = g.c_row_stride, c_col = g.c_col_stride;  // C's strides into the [M, N] output
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const bool use_c = c && beta_ != 0.0f;
    const int64_t lda = a.dim(1), ldb = b.dim(1);
    Dispatch(NumericTypes{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || kIsHalf<T>) {
        std::vector<float> af, bf, yf;
        const float* ap;
        const float* bp;
        float* yp;
        if constexpr (kIsHalf<T>) {
          af = ToFloatVector(a.data<T>(), a.size());
          bf = ToFloatVector(b.data<T>(), b.size());
          yf.resize(static_cast<size_t>(y.size()));
          ap = af.data();
          bp = bf.data();
          yp = yf.data();
        } else {
          ap = a.data<float>();
          bp = b.data<float>();
          yp = y.data<float>();
        }
        if (use_c) {
          const T* cp = c->data<T>();
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) yp[i * n + j] = static_cast<float>(cp[i * c_row + j * c_col]);
        }
        GemmF32(trans_a_, trans_b_, m, n, k, alpha_, ap, lda, bp, ldb, use_c ? beta_ : 0.0f, yp, n, ctx.threads());
        if constexpr (kIsHalf<T>) FromFloatVector(yf, y.data<T>());
      } else {
        T* yp = y.data<T>();
        GemmSimple(trans_a_, trans_b_, m, n, k, a.data<T>(), lda, b.data<T>(), ldb, false, yp, n);
        const bool plain = alpha_ == 1.0f && (!use_c || beta_ == 1.0f);
        const T* cp = use_c ? c->data<T>() : nullptr;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            T& out = yp[i * n + j];
            if (plain) {
              if (cp) out = static_cast<T>(out + cp[i * c_row + j * c_col]);
            } else {
              double v = static_cast<double>(alpha_) * static_cast<double>(out);
              if (cp) v += static_cast<double>(beta_) * static_cast<double>(cp[i * c_row + j * c_col]);
              out = static_cast<T>(v);
            }
          }
        }
      }
    });
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
};

}  // namespace

void RegisterGemmKernels(KernelRegistry& r) {
  using D = DataType;
  r.Add({.op = "Gemm",
         .since = 1,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), {D::kInt32, D::kInt64, D::kUint32, D::kUint64})}},
         .create = MakeKernel<Gemm>});
}

}  // namespace ferry::ref
