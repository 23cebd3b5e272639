// SoftmaxCrossEntropyLoss (opsets 12, 13): log_prob = LogSoftmax(scores, axis=1), then the
// NegativeLogLikelihoodLoss of log_prob (weights, ignore_index, reduction). The optional second output is log_prob.
// Prepare checks the shapes (LossDims); Compute checks the labels' values.
#include <cmath>
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
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& scores = ctx.tensor_input(0);
    const InputSpec& labels = ctx.tensor_input(1);
    const InputSpec* weight = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    if (weight && weight->dtype != scores.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": weights dtype " + std::string(DataTypeName(weight->dtype)) +
                                 " differs from scores dtype " + std::string(DataTypeName(scores.dtype)) + " (" +
                                 ctx.InputString(2) + ", " + ctx.InputString(0) + ")");
    }
    // LossDims reads dtypes and shapes only: tensors without data stand for the inputs.
    const auto spec = [](const InputSpec& in) { return Tensor::Wrap(in.dtype, in.shape, nullptr, nullptr); };
    const Tensor weight_t = weight ? spec(*weight) : Tensor();
    ctx.EmplaceState(LossDims(spec(scores), spec(labels), weight ? &weight_t : nullptr, ctx.Describe()));
    ctx.SetOutput(0, scores.dtype, reduction_ == LossReduction::kNone ? labels.shape : Shape{});
    if (ctx.output_requested(1)) {
      ctx.SetOutput(1, scores.dtype, scores.shape);
    } else if (ctx.output_count() > 1) {
      ctx.SetOutputDynamic(1);  // omitted: Compute does not write it
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& scores = ctx.required_input(0);
    const Tensor& labels = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const auto& dims = ctx.state<std::vector<int64_t>>();
    const int64_t n = dims[0], c = dims[1], d = dims[2];
    Tensor& out = ctx.Output(0);
    Dispatch(FloatTypes{}, scores.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      // log-softmax over axis 1 in double.
      std::vector<double> logp(static_cast<size_t>(scores.size()));
      const T* s = scores.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < d; ++j) {
          double mx = -INFINITY;
          for (int64_t k = 0; k < c; ++k) mx = std::max(mx, static_cast<double>(static_cast<Acc<T>>(s[(i * c + k) * d + j])));
          double sum = 0;
          for (int64_t k = 0; k < c; ++k) sum += std::exp(static_cast<double>(static_cast<Acc<T>>(s[(i * c + k) * d + j])) - mx);
          const double lse = mx + std::log(sum);
          for (int64_t k = 0; k < c; ++k) {
            const size_t idx = static_cast<size_t>((i * c + k) * d + j);
            logp[idx] = static_cast<double>(static_cast<Acc<T>>(s[idx])) - lse;
          }
        }
      }
      if (ctx.output_requested(1)) {
        Tensor& lp = ctx.Output(1);
        T* o = lp.data<T>();
        for (size_t i = 0; i < logp.size(); ++i) o[i] = T(static_cast<Acc<T>>(logp[i]));
      }
      auto run = [&](auto itag) {
        using I = decltype(itag);
        std::vector<double> elem;
        auto load_logp = [](double v) { return v; };
        auto load_w = [](T v) { return static_cast<double>(static_cast<Acc<T>>(v)); };
        std::vector<double> w;
        if (weight) {
          w.resize(static_cast<size_t>(c));
          for (int64_t k = 0; k < c; ++k) w[static_cast<size_t>(k)] = load_w(weight->data<T>()[k]);
        }
        // The description names the node in a label's range error (the run's data).
        double r = NllLossCore<double, I>(logp.data(), labels.data<I>(), weight ? w.data() : nullptr, n, c, d,
                                          has_ignore_, ignore_index_, reduction_, elem, load_logp, ctx.Describe());
        T* o = out.data<T>();
        if (reduction_ == LossReduction::kNone) {
          for (size_t i = 0; i < elem.size(); ++i) o[i] = T(static_cast<Acc<T>>(elem[i]));
        } else {
          o[0] = T(static_cast<Acc<T>>(r));
        }
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
