// SoftmaxCrossEntropyLoss (opsets 12, 13): log_prob = LogSoftmax(scores, axis=1), then the
// NegativeLogLikelihoodLoss of log_prob (weights, ignore_index, reduction). The optional second output is log_prob.
// Prepare checks the shapes (PrepareLoss); Compute checks the labels' values.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/loss_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class SoftmaxCrossEntropyLoss : public OpKernel {
 public:
  explicit SoftmaxCrossEntropyLoss(const ir::Node& node)
      : reduction_(ParseLossReduction(node)),
        has_ignore_(node.has_attr("ignore_index")),
        ignore_index_(node.GetInt("ignore_index", 0)) {}

  // The checks of scores, labels and weights, and their {N, C, D}; the loss (labels' shape, or a scalar) and
  // log_prob (scores' shape) when requested.
  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareLoss(ctx, reduction_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& scores = ctx.required_input(0);
    const Tensor& labels = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const LossShape& s = ctx.state<LossShape>();
    const int64_t slab = s.c * s.d;
    Tensor& out = ctx.Output(0);
    Dispatch(FloatTypes{}, scores.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      // log-softmax over axis 1 in double.
      std::vector<double> logp(static_cast<size_t>(scores.size()));
      for (int64_t i = 0; i < s.n; ++i) {
        LogSoftmaxColumns(scores.data<T>() + i * slab, s.c, s.d, 0, s.d, logp.data() + i * slab, s.d);
      }
      if (ctx.output_requested(1)) {
        Tensor& lp = ctx.Output(1);
        T* o = lp.data<T>();
        for (size_t i = 0; i < logp.size(); ++i) o[i] = T(static_cast<Acc<T>>(logp[i]));
      }
      const std::vector<double> w = LossWeights<T>(weight);
      auto run = [&](auto itag) {
        using I = decltype(itag);
        const I* tgt = labels.data<I>();
        // The description names the node in a label's range error (the run's data).
        CheckLossTargets(tgt, s.n * s.d, s.c, has_ignore_, ignore_index_, ctx.Describe());
        T* o = out.data<T>();
        double sum = 0, weight_sum = 0;
        for (int64_t i = 0; i < s.n; ++i) {
          auto store = [&](int64_t p, double v) {
            if (reduction_ == LossReduction::kNone) o[i * s.d + p] = T(static_cast<Acc<T>>(v));
          };
          LossColumns(logp.data() + i * slab, s.d, tgt + i * s.d, weight ? w.data() : nullptr, s.d, has_ignore_,
                      ignore_index_, store, sum, weight_sum);
        }
        if (reduction_ != LossReduction::kNone) o[0] = T(static_cast<Acc<T>>(ReduceLoss(reduction_, sum, weight_sum)));
      };
      Dispatch(TypeList<int32_t, int64_t>{}, labels.dtype(), ctx, run);
    });
  }

 private:
  LossReduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

}  // namespace

void RegisterSoftmaxCrossEntropyLossKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const std::vector<DataType> ind = {DataType::kInt32, DataType::kInt64};
  r.Add({.op = "SoftmaxCrossEntropyLoss",
         .since = 12,
         .until = 12,
         .types = {{"T", f}, {"Tind", ind}},
         .create = MakeKernel<SoftmaxCrossEntropyLoss>});
  r.Add({.op = "SoftmaxCrossEntropyLoss",
         .since = 13,
         .types = {{"T", dtypes::Concat(f, {DataType::kBFloat16})}, {"Tind", ind}},
         .create = MakeKernel<SoftmaxCrossEntropyLoss>});
}

}  // namespace ferry::ref
