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

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    if (weight && weight->dtype() != input.dtype())
      throw InvalidArgumentError(ctx.Describe() + ": weight dtype " + std::string(DataTypeName(weight->dtype())) +
                                 " differs from input dtype " + std::string(DataTypeName(input.dtype())));
    const auto dims = LossDims(input, target, weight, ctx.Describe());
    Tensor& out = ctx.Output(0, input.dtype(), reduction_ == LossReduction::kNone ? target.shape() : Shape{});
    Dispatch(FloatTypes{}, input.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      auto load = [](T v) { return static_cast<double>(static_cast<Acc<T>>(v)); };
      auto run = [&](auto itag) {
        using I = decltype(itag);
        std::vector<double> elem;
        double r = NllLossCore<T, I>(input.data<T>(), target.data<I>(), weight ? weight->data<T>() : nullptr,
                                     dims[0], dims[1], dims[2], has_ignore_, ignore_index_, reduction_, elem, load,
                                     ctx.Describe());
        T* o = out.data<T>();
        if (reduction_ == LossReduction::kNone) {
          for (size_t i = 0; i < elem.size(); ++i) o[i] = T(static_cast<Acc<T>>(elem[i]));
        } else {
          o[0] = T(static_cast<Acc<T>>(r));
        }
      };
      Dispatch(TypeList<int32_t, int64_t>{}, target.dtype(), ctx.Describe(), run);
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
