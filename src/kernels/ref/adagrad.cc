// Adagrad (ai.onnx.preview.training opset 1). Inputs R, T, X1..Xn, G1..Gn, H1..Hn; outputs X1_new..Xn_new,
// H1_new..Hn_new:
//   r = R / (1 + T * decay_factor);  g = norm_coefficient * X + G;  H_new = H + g^2;
//   X_new = X - r * g / (sqrt(H_new) + epsilon).
#include <cmath>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/training_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Adagrad : public OpKernel {
 public:
  explicit Adagrad(const ir::Node& node)
      : decay_(node.GetFloat("decay_factor", 0.0f)),
        epsilon_(node.GetFloat("epsilon", 0.0f)),
        norm_(node.GetFloat("norm_coefficient", 0.0f)) {}

  // R, T and the groups X, G, H checked; X_new and H_new have X's shape and type.
  void Prepare(PrepareContext& ctx) const override { PrepareOptimizer(ctx, 3); }

  void Compute(KernelContext& ctx) const override {
    const double rate = ReadRate(ctx.required_input(0));
    const int64_t t = ctx.required_input(1).data<int64_t>()[0];
    const double r = rate / (1.0 + static_cast<double>(t) * decay_);
    const int n = (ctx.input_count() - 2) / 3;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& h = ctx.required_input(2 + 2 * n + i);
      Tensor& x_new = ctx.Output(i);
      Tensor& h_new = ctx.Output(n + i);
      Dispatch(TypeList<float, double>{}, x.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < x.size(); ++k) {
          const double gr = norm_ * x.data<T>()[k] + g.data<T>()[k];
          const double hn = h.data<T>()[k] + gr * gr;
          h_new.data<T>()[k] = static_cast<T>(hn);
          x_new.data<T>()[k] = static_cast<T>(x.data<T>()[k] - r * gr / (std::sqrt(hn) + epsilon_));
        }
      });
    }
  }

 private:
  double decay_, epsilon_, norm_;
};

}  // namespace

void RegisterAdagradKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Adagrad",
         .domain = "ai.onnx.preview.training",
         .since = 1,
         .types = {{"T1", f}, {"T2", {DataType::kInt64}}, {"T3", f}},
         .create = MakeKernel<Adagrad>});
}

}  // namespace ferry::ref
