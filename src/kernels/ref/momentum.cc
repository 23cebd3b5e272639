// Momentum (ai.onnx.preview.training opset 1). Inputs R, T, X1..Xn, G1..Gn, V1..Vn; outputs X_new.., V_new..:
//   g = norm_coefficient * X + G;  V_new = alpha * V + (T > 0 ? beta : 1) * g;
//   mode "standard": X_new = X - R * V_new;  mode "nesterov": X_new = X - R * (g + alpha * V_new).
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/training_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Momentum : public OpKernel {
 public:
  explicit Momentum(const ir::Node& node)
      : alpha_(Required(node, "alpha")), beta_(Required(node, "beta")), norm_(Required(node, "norm_coefficient")) {
    node.RequireAttr("mode");
    const std::string mode = node.GetString("mode", "");
    if (mode != "standard" && mode != "nesterov")
      throw InvalidModelError(node.Describe() + ": mode must be 'standard' or 'nesterov', got '" + mode + "'");
    nesterov_ = mode == "nesterov";
  }

  // R, T and the groups X, G, V checked; X_new and V_new have X's shape and type.
  void Prepare(PrepareContext& ctx) const override { PrepareOptimizer(ctx, 3); }

  void Compute(KernelContext& ctx) const override {
    const double rate = ReadRate(ctx.required_input(0));
    const int64_t t = ctx.required_input(1).data<int64_t>()[0];
    const double beta = t > 0 ? beta_ : 1.0;
    const int n = (ctx.input_count() - 2) / 3;
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& v = ctx.required_input(2 + 2 * n + i);
      Tensor& x_new = ctx.Output(i);
      Tensor& v_new = ctx.Output(n + i);
      Dispatch(TypeList<float, double>{}, x.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < x.size(); ++k) {
          const double gr = norm_ * x.data<T>()[k] + g.data<T>()[k];
          const double vn = alpha_ * v.data<T>()[k] + beta * gr;
          v_new.data<T>()[k] = static_cast<T>(vn);
          const double step = nesterov_ ? gr + alpha_ * vn : vn;
          x_new.data<T>()[k] = static_cast<T>(x.data<T>()[k] - rate * step);
        }
      });
    }
  }

 private:
  static double Required(const ir::Node& node, const char* name) {
    node.RequireAttr(name);
    return node.GetFloat(name, 0.0f);
  }

  double alpha_, beta_, norm_;
  bool nesterov_ = false;
};

}  // namespace

void RegisterMomentumKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Momentum",
         .domain = "ai.onnx.preview.training",
         .since = 1,
         .types = {{"T1", f}, {"T2", {DataType::kInt64}}, {"T3", f}},
         .create = MakeKernel<Momentum>});
}

}  // namespace ferry::ref
