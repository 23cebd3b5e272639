// GroupNormalization. X is [N, C, D1, ...]; the C channels form num_groups groups of C / num_groups consecutive
// channels, and each (n, group) block (contiguous) is normalised by its own mean and population variance.
// Opset 18: scale and bias have one value per group. Opset 21: one value per channel (the version that matches
// PyTorch's GroupNorm); stash_type gives the statistics' precision (float unless double is asked for).
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class GroupNormalization : public OpKernel {
 public:
  explicit GroupNormalization(const ir::Node& node)
      : epsilon_(node.GetFloat("epsilon", 1e-5f)),
        groups_(node.RequireAttr("num_groups").i),
        per_channel_(node.opset() >= 21) {
    if (groups_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'num_groups' must be positive, got " +
                              std::to_string(groups_));
    }
    StashType(node.GetInt("stash_type", 1), node.Describe());  // validates the attribute
  }

  // Each (n, group) block: group_channels channels of `spatial` elements.
  struct Plan {
    int64_t spatial = 1, group_channels = 0, block = 0;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec& bias = ctx.tensor_input(2);
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 2, got " + ctx.InputString(0));
    }
    const int64_t channels = x.shape[1];
    if (channels % groups_ != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": C = " + std::to_string(channels) +
                                 " is not divisible by num_groups = " + std::to_string(groups_) + " (" +
                                 ctx.InputString(0) + ")");
    }
    const int64_t params = per_channel_ ? channels : groups_;
    const int64_t scale_size = ShapeElementCount(scale.shape), bias_size = ShapeElementCount(bias.shape);
    if (scale_size != params || bias_size != params) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs 'scale' and 'bias' must have " + std::to_string(params) +
                                 (per_channel_ ? " (C)" : " (num_groups)") + " elements, got " +
                                 std::to_string(scale_size) + " and " + std::to_string(bias_size) + " (" +
                                 ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
    }
    if (ShapeElementCount(x.shape) != 0) {  // the parameters are read only for a non-empty X
      Dispatch(FloatTypes{}, scale.dtype, ctx.Describe(), [](auto) {});
      Dispatch(FloatTypes{}, bias.dtype, ctx.Describe(), [](auto) {});
    }
    Plan p;
    for (size_t d = 2; d < x.shape.size(); ++d) p.spatial *= x.shape[d];
    p.group_channels = channels / groups_;
    p.block = p.group_channels * p.spatial;
    ctx.EmplaceState(p);
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor& bias = ctx.required_input(2);
    const Plan& p = ctx.state<Plan>();
    const int64_t spatial = p.spatial, group_channels = p.group_channels, block = p.block;
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const std::vector<A> s = ReadFloats<A>(scale, ctx);
      const std::vector<A> b = ReadFloats<A>(bias, ctx);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t blocks = x.dim(0) * groups_;
      ParallelFor(ctx.threads(), blocks, std::max<int64_t>(1, 8192 / std::max<int64_t>(block, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t g = begin; g < end; ++g) {
                      const T* xr = in + g * block;
                      T* yr = out + g * block;
                      A sum = 0;
                      for (int64_t i = 0; i < block; ++i) sum += static_cast<A>(xr[i]);
                      const A mean = sum / static_cast<A>(block);
                      A sq = 0;
                      for (int64_t i = 0; i < block; ++i) {
                        const A d = static_cast<A>(xr[i]) - mean;
                        sq += d * d;
                      }
                      const A inv = A(1) / std::sqrt(sq / static_cast<A>(block) + static_cast<A>(epsilon_));
                      const int64_t group = g % groups_;
                      for (int64_t c = 0; c < group_channels; ++c) {
                        const size_t pi = static_cast<size_t>(per_channel_ ? group * group_channels + c : group);
                        const A mul = s[pi] * inv;
                        const A add = b[pi] - mean * mul;
                        const T* xc = xr + c * spatial;
                        T* yc = yr + c * spatial;
                        for (int64_t i = 0; i < spatial; ++i) yc[i] = T(static_cast<A>(xc[i]) * mul + add);
                      }
                    }
                  });
    });
  }

 private:
  float epsilon_;
  int64_t groups_;
  bool per_channel_;
};

}  // namespace

void RegisterGroupNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "GroupNormalization",
         .since = 18,
         .until = 20,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<GroupNormalization>});
  r.Add({.op = "GroupNormalization",
         .since = 21,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<GroupNormalization>});
}

}  // namespace ferry::ref
