// Adam (ai.onnx.preview.training opset 1). Inputs R, T, X1..Xn, G1..Gn, V1..Vn, H1..Hn; outputs X_new.., V_new..,
// H_new..:
//   g = norm_coefficient * X + G;  V_new = alpha * V + (1 - alpha) * g;  H_new = beta * H + (1 - beta) * g^2;
//   r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//   X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon)).
#include <cmath>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/training_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Adam : public OpKernel {
 public:
  explicit Adam(const ir::Node& node)
      : alpha_(node.GetFloat("alpha", 0.9f)),
        beta_(node.GetFloat("beta", 0.999f)),
        epsilon_(node.GetFloat("epsilon", 1e-6f)),
        norm_(node.GetFloat("norm_coefficient", 0.0f)),
        norm_post_(node.GetFloat("norm_coefficient_post", 0.0f)) {}

  // R, T and the groups X, G, V, H checked; X_new, V_new and H_new have X's shape and type.
  void Prepare(PrepareContext& ctx) const override { PrepareOptimizer(ctx, 4); }

  void Compute(KernelContext& ctx) const override {
    const double rate = ReadRate(ctx.required_input(0));
    const int64_t step = ctx.required_input(1).data<int64_t>()[0];
    double r = rate;
    if (step > 0) {
      const double t = static_cast<double>(step);
      r = rate * std::sqrt(1.0 - std::pow(beta_, t)) / (1.0 - std::pow(alpha_, t));
    }
    const int n = (ctx.input_count() - 2) / 4;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& v = ctx.required_input(2 + 2 * n + i);
      const Tensor& h = ctx.required_input(2 + 3 * n + i);
      Tensor& x_new = ctx.Output(i);
      Tensor& v_new = ctx.Output(n + i);
      Tensor& h_new = ctx.Output(2 * n + i);
      Dispatch(TypeList<float, double>{}, x.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < x.size(); ++k) {
          const double gr = norm_ * x.data<T>()[k] + g.data<T>()[k];
          const double vn = alpha_ * v.data<T>()[k] + (1.0 - alpha_) * gr;
          const double hn = beta_ * h.data<T>()[k] + (1.0 - beta_) * gr * gr;
          v_new.data<T>()[k] = static_cast<T>(vn);
          h_new.data<T>()[k] = static_cast<T>(hn);
          const double xn = x.data<T>()[k] - r * vn / (std::sqrt(hn) + epsilon_);
          x_new.data<T>()[k] = static_cast<T>((1.0 - norm_post_) * xn);
        }
      });
    }
  }

 private:
  double alpha_, beta_, epsilon_, norm_, norm_post_;
};

}  // namespace

void RegisterAdamKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Adam",
         .domain = "ai.onnx.preview.training",
         .since = 1,
         .types = {{"T1", f}, {"T2", {DataType::kInt64}}, {"T3", f}},
         .create = MakeKernel<Adam>});
}

}  // namespace ferry::ref
