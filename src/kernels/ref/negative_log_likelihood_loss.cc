// NegativeLogLikelihoodLoss (opsets 12, 13, 22): loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]],
// zero where target == ignore_index; reduction "none" keeps the target shape, "sum" adds, "mean" divides by the
// sum of the applied weights.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/loss_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class NegativeLogLikelihoodLoss : public OpKernel {
 public:
  explicit NegativeLogLikelihoodLoss(const ir::Node& node)
      : reduction_(ParseLossReduction(node)),
        has_ignore_(node.has_attr("ignore_index")),
        ignore_index_(node.GetInt("ignore_index", 0)) {}

  // Input [N, C, d1..dk] against target [N, d1..dk] and weight [C] (PrepareLoss).
  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareLoss(ctx, reduction_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const LossShape& s = ctx.state<LossShape>();
    Tensor& out = ctx.Output(0);
    Dispatch(FloatTypes{}, input.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const std::vector<double> w = LossWeights<T>(weight);
      auto run = [&](auto itag) {
        using I = decltype(itag);
        const I* tgt = target.data<I>();
        CheckLossTargets(tgt, s.n * s.d, s.c, has_ignore_, ignore_index_, ctx.Describe());
        T* o = out.data<T>();
        double sum = 0, weight_sum = 0;
        for (int64_t i = 0; i < s.n; ++i) {
          auto store = [&](int64_t p, double v) {
            if (reduction_ == LossReduction::kNone) o[i * s.d + p] = T(static_cast<Acc<T>>(v));
          };
          LossColumns(input.data<T>() + i * s.c * s.d, s.d, tgt + i * s.d, weight ? w.data() : nullptr, s.d,
                      has_ignore_, ignore_index_, store, sum, weight_sum);
        }
        if (reduction_ != LossReduction::kNone) o[0] = T(static_cast<Acc<T>>(ReduceLoss(reduction_, sum, weight_sum)));
      };
      Dispatch(TypeList<int32_t, int64_t>{}, target.dtype(), ctx, run);
    });
  }

 private:
  LossReduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

}  // namespace

void RegisterNegativeLogLikelihoodLossKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const std::vector<DataType> ind = {DataType::kInt32, DataType::kInt64};
  r.Add({.op = "NegativeLogLikelihoodLoss",
         .since = 12,
         .until = 21,
         .types = {{"T", f}, {"Tind", ind}},
         .create = MakeKernel<NegativeLogLikelihoodLoss>});
  r.Add({.op = "NegativeLogLikelihoodLoss",
         .since = 22,
         .types = {{"T", dtypes::Concat(f, {DataType::kBFloat16})}, {"Tind", ind}},
         .create = MakeKernel<NegativeLogLikelihoodLoss>});
}

}  // namespace ferry::ref
