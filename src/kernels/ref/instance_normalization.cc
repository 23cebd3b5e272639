// InstanceNormalization (opsets 1, 6, 22): X is [N, C, D1, ...]; each (n, c) plane is normalised by its own mean
// and (population) variance, then scaled and shifted per channel: Y = scale[c] * (X - mean) / sqrt(var + eps) + B[c].
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class InstanceNormalization : public OpKernel {
 public:
  explicit InstanceNormalization(const ir::Node& node) : epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec& bias = ctx.tensor_input(2);
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input' must have rank >= 2, got " + ctx.InputString(0));
    }
    const int64_t channels = x.shape[1];
    const int64_t scale_size = ShapeElementCount(scale.shape), bias_size = ShapeElementCount(bias.shape);
    if (scale_size != channels || bias_size != channels) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs 'scale' and 'B' must have C = " +
                                 std::to_string(channels) + " elements, got " + std::to_string(scale_size) +
                                 " and " + std::to_string(bias_size) + " (" + ctx.InputString(1) + ", " +
                                 ctx.InputString(2) + ")");
    }
    if (ShapeElementCount(x.shape) != 0) {  // the parameters are read only for a non-empty X
      Dispatch(FloatTypes{}, scale.dtype, ctx.Describe(), [](auto) {});
      Dispatch(FloatTypes{}, bias.dtype, ctx.Describe(), [](auto) {});
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor& bias = ctx.required_input(2);
    const int64_t channels = x.dim(1);
    int64_t spatial = 1;
    for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const std::vector<A> s = ReadFloats<A>(scale, ctx);
      const std::vector<A> b = ReadFloats<A>(bias, ctx);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t planes = x.dim(0) * channels;
      ParallelFor(ctx.threads(), planes, std::max<int64_t>(1, 8192 / std::max<int64_t>(spatial, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t p = begin; p < end; ++p) {
                      const T* xr = in + p * spatial;
                      T* yr = out + p * spatial;
                      A sum = 0;
                      for (int64_t i = 0; i < spatial; ++i) sum += static_cast<A>(xr[i]);
                      const A mean = sum / static_cast<A>(spatial);
                      A sq = 0;
                      for (int64_t i = 0; i < spatial; ++i) {
                        const A d = static_cast<A>(xr[i]) - mean;
                        sq += d * d;
                      }
                      const size_t c = static_cast<size_t>(p % channels);
                      const A mul = s[c] / std::sqrt(sq / static_cast<A>(spatial) + static_cast<A>(epsilon_));
                      const A add = b[c] - mean * mul;
                      for (int64_t i = 0; i < spatial; ++i) yr[i] = T(static_cast<A>(xr[i]) * mul + add);
                    }
                  });
    });
  }

 private:
  float epsilon_;
};

}  // namespace

void RegisterInstanceNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "InstanceNormalization",
         .since = 1,
         .until = 21,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<InstanceNormalization>});
  r.Add({.op = "InstanceNormalization",
         .since = 22,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<InstanceNormalization>});
}

}  // namespace ferry::ref
