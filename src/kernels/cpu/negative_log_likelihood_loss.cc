// NegativeLogLikelihoodLoss on the cpu backend (float32, float64, float16): ref's checks and per-position loss
// (ref/loss_util.h), threaded over (batch entry, block of positions) items (negative_log_likelihood_loss.h). The
// gather of -input[n, target[n, d], d] * weight[target] is memory-bound, one load per position: plain loops.
// Positions and weights are in double as in ref, so "none" gives ref's bits; "sum" and "mean" add the items'
// partial sums in a fixed order (a different order from ref's, independent of the thread count).
#include <string>
#include <vector>

#include "kernels/cpu/negative_log_likelihood_loss.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class NegativeLogLikelihoodLoss : public OpKernel {
 public:
  explicit NegativeLogLikelihoodLoss(const ir::Node& node) : attrs_(node) {}

  // Input [N, C, d1..dk] against target [N, d1..dk] and weight [C] (ref::PrepareLoss).
  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(ref::PrepareLoss(ctx, attrs_.reduction)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const ref::LossShape& s = ctx.state<ref::LossShape>();
    Tensor& out = ctx.OutputUninitialized(0);
    ref::Dispatch(ref::TypeList<float, double, Float16>{}, input.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = ref::Acc<T>;
      const std::vector<double> w = ref::LossWeights<T>(weight);
      const double* wp = weight ? w.data() : nullptr;
      const T* x = input.data<T>();
      T* o = out.data<T>();
      const bool none = attrs_.reduction == ref::LossReduction::kNone;
      ref::Dispatch(ref::TypeList<int32_t, int64_t>{}, target.dtype(), ctx, [&](auto itag) {
        using I = decltype(itag);
        const I* tgt = target.data<I>();
        ref::CheckLossTargets(tgt, s.n * s.d, s.c, attrs_.has_ignore, attrs_.ignore_index, ctx.Describe());
        auto body = [&](std::vector<char>&, int64_t i, int64_t j0, int64_t j1, double& sum, double& weight_sum) {
          T* row = o + i * s.d + j0;
          auto store = [&](int64_t p, double v) {
            if (none) row[p] = T(static_cast<A>(v));
          };
          ref::LossColumns(x + i * s.c * s.d + j0, s.d, tgt + i * s.d + j0, wp, j1 - j0, attrs_.has_ignore,
                           attrs_.ignore_index, store, sum, weight_sum);
        };
        const double r = ForLossBlocks<char>(ctx.threads(), s, attrs_.reduction, 16384, 4, body);
        if (!none) o[0] = T(static_cast<A>(r));
      });
    });
  }

 private:
  LossAttributes attrs_;
};

}  // namespace

void RegisterNegativeLogLikelihoodLossKernels(KernelRegistry& r) {
  for (const auto& [since, until] : {std::pair{12, 21}, std::pair{22, kOpsetOpen}}) {
    r.Add({.op = "NegativeLogLikelihoodLoss",
           .since = since,
           .until = until,
           .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}},
                     {"Tind", {DataType::kInt32, DataType::kInt64}}},
           .create = MakeKernel<NegativeLogLikelihoodLoss>});
  }
}

}  // namespace ferry::cpu
