// com.microsoft::CDist (ONNX Runtime's contrib op, scipy.spatial.distance.cdist): C[i, j] = sum_n (A[i, n] -
// B[j, n])^2 for metric "sqeuclidean" (the default), its square root for "euclidean"; A [M, N], B [K, N], C [M, K],
// float or double (what ONNX Runtime's CPU kernel registers). ref sums the squared differences in double, so a
// distance is never negative and identical rows give exactly 0 (ONNX Runtime computes ||a||^2 + ||b||^2 - 2 a.b
// with a GEMM and takes |.|: results agree within rounding). NaN propagates; an inf gives inf (or NaN for inf -
// inf). N = 0 gives zeros; M or K = 0 an empty C. Any other metric is refused when the kernel is made.
#include <cmath>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/cdist.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {

bool CDistIsEuclidean(const ir::Node& node) {
  const std::string metric = node.GetString("metric", "sqeuclidean");
  if (metric == "sqeuclidean") return false;
  if (metric == "euclidean") return true;
  throw InvalidModelError(node.Describe() + ": attribute metric = '" + metric +
                          "' is not supported; expected 'sqeuclidean' or 'euclidean'");
}

CDistGeometry CheckCDistInputs(const PrepareContext& ctx) {
  const InputSpec& a = ctx.tensor_input(0);
  const InputSpec& b = ctx.tensor_input(1);
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[1] || a.dtype != b.dtype) {
    throw InvalidArgumentError(ctx.Describe() + ": inputs 'A' [M, N] and 'B' [K, N] must be 2-D of one type with " +
                               "the same N, got " + ctx.InputString(0) + " and " + ctx.InputString(1));
  }
  return {a.shape[0], b.shape[0], a.shape[1]};
}

namespace {

class CDist : public OpKernel {
 public:
  explicit CDist(const ir::Node& node) : euclidean_(CDistIsEuclidean(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const CDistGeometry g = CheckCDistInputs(ctx);
    ctx.EmplaceState(g);
    ctx.SetOutput(0, ctx.tensor_input(0).dtype, {g.m, g.k});
  }

  void Compute(KernelContext& ctx) const override {
    const CDistGeometry& g = ctx.state<CDistGeometry>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& c = ctx.OutputUninitialized(0);
    Dispatch(TypeList<float, double>{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = c.data<T>();
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.k; ++j) {
          double s = 0;
          for (int64_t t = 0; t < g.n; ++t) {
            const double d = static_cast<double>(pa[i * g.n + t]) - static_cast<double>(pb[j * g.n + t]);
            s += d * d;
          }
          pc[i * g.k + j] = static_cast<T>(euclidean_ ? std::sqrt(s) : s);
        }
      }
    });
  }

 private:
  bool euclidean_;
};

}  // namespace

void RegisterCDistKernels(KernelRegistry& r) {
  r.Add({.op = "CDist",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble}}},
         .create = MakeKernel<CDist>});
}

}  // namespace ferry::ref
