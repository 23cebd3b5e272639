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

  // Input [N, C, d1..dk] against target [N, d1..dk] and weight [C] (LossDims' checks, on the shapes).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& input = ctx.tensor_input(0);
    const InputSpec& target = ctx.tensor_input(1);
    const InputSpec* weight = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    if (weight && weight->dtype != input.dtype)
      throw InvalidArgumentError(ctx.Describe() + ": weight dtype " + std::string(DataTypeName(weight->dtype)) +
                                 " differs from input dtype " + std::string(DataTypeName(input.dtype)) + " (" +
                                 ctx.InputString(2) + ", " + ctx.InputString(0) + ")");
    const int64_t rank = static_cast<int64_t>(input.shape.size());
    if (rank < 2)
      throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2 ([N, C, ...]), got " +
                                 ShapeToString(input.shape) + " (" + ctx.InputString(0) + ")");
    bool ok = static_cast<int64_t>(target.shape.size()) == rank - 1 && target.shape[0] == input.shape[0];
    for (size_t i = 1; ok && i < target.shape.size(); ++i) ok = target.shape[i] == input.shape[i + 1];
    if (!ok)
      throw InvalidArgumentError(ctx.Describe() + ": target shape " + ShapeToString(target.shape) +
                                 " does not match input shape " + ShapeToString(input.shape) +
                                 " (expected [N, d1, ..., dk] for input [N, C, d1, ..., dk]; " + ctx.InputString(1) +
                                 ")");
    const int64_t c = input.shape[1];
    if (weight && (weight->shape.size() != 1 || weight->shape[0] != c))
      throw InvalidArgumentError(ctx.Describe() + ": weight must have shape [" + std::to_string(c) + "], got " +
                                 ShapeToString(weight->shape) + " (" + ctx.InputString(2) + ")");
    int64_t d = 1;
    for (int64_t i = 2; i < rank; ++i) d *= input.shape[static_cast<size_t>(i)];
    ctx.EmplaceState(Dims{input.shape[0], c, d});
    ctx.SetOutput(0, input.dtype, reduction_ == LossReduction::kNone ? target.shape : Shape{});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const Dims& dims = ctx.state<Dims>();
    Tensor& out = ctx.Output(0);
    Dispatch(FloatTypes{}, input.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      auto load = [](T v) { return static_cast<double>(static_cast<Acc<T>>(v)); };
      auto run = [&](auto itag) {
        using I = decltype(itag);
        std::vector<double> elem;
        double r = 0;
        try {  // a target value out of range (data): NllLossCore's message, after the node's description
          r = NllLossCore<T, I>(input.data<T>(), target.data<I>(), weight ? weight->data<T>() : nullptr, dims.n, dims.c,
                                dims.d, has_ignore_, ignore_index_, reduction_, elem, load, std::string());
        } catch (const InvalidArgumentError& e) {
          throw InvalidArgumentError(ctx.Describe() + e.what());
        }
        T* o = out.data<T>();
        if (reduction_ == LossReduction::kNone) {
          for (size_t i = 0; i < elem.size(); ++i) o[i] = T(static_cast<Acc<T>>(elem[i]));
        } else {
          o[0] = T(static_cast<Acc<T>>(r));
        }
      };
      Dispatch(TypeList<int32_t, int64_t>{}, target.dtype(), ctx, run);
    });
  }

 private:
  struct Dims {
    int64_t n, c, d;  // batch, classes, product of the trailing dims
  };
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
