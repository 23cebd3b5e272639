// BatchNormalization, all versions (1, 6, 7, 9, 14, 15). X is [N, C, D1, ...]; per channel
// Y = (X - mean) / sqrt(var + epsilon) * scale + B, folded into one multiply-add per element over contiguous
// spatial runs. Legacy forms: opset < 9 `spatial=0` gives per-(channel, position) parameters of shape [C, D1, ...]
// (detected from the parameter size); opset <= 6 `is_test`. Training (opset 14+ `training_mode=1`, or an older
// node that asks for the running statistics) normalises with the batch statistics and also returns
// running_mean = mean * momentum + batch_mean * (1 - momentum) (and likewise the variance, population form);
// opsets < 14 additionally return the batch mean and variance as saved_mean / saved_var.
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class BatchNormalization : public OpKernel {
 public:
  explicit BatchNormalization(const ir::Node& node)
      : epsilon_(node.GetFloat("epsilon", 1e-5f)), momentum_(node.GetFloat("momentum", 0.9f)) {
    if (node.opset() >= 14) {
      training_ = node.GetInt("training_mode", 0) != 0;
    } else {
      // Older versions train when the node asks for the running statistics (and, up to opset 6, is_test=0).
      bool wants_stats = false;
      for (size_t i = 1; i < node.num_outputs(); ++i) wants_stats = wants_stats || node.output(i) != nullptr;
      training_ = wants_stats && !(node.opset() <= 6 && node.GetInt("is_test", 0) != 0);
    }
  }

  // Every check of X and the parameters; the parameter layout (per channel, or legacy per channel and position).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    for (int i = 2; i <= 4; ++i) ctx.tensor_input(i);
    if (x.shape.empty()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got " + ctx.InputString(0));
    }
    Plan p;
    p.batch = x.shape[0];
    p.channels = x.shape.size() > 1 ? x.shape[1] : 1;
    for (size_t d = 2; d < x.shape.size(); ++d) p.spatial *= x.shape[d];
    // Parameters are per channel, or (legacy spatial=0) per channel and position.
    p.psize = ShapeElementCount(scale.shape);
    p.per_position = p.psize != p.channels && p.psize == p.channels * p.spatial;
    if (p.psize != p.channels && !p.per_position) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'scale' has " + std::to_string(p.psize) +
                                 " elements, expected C = " + std::to_string(p.channels) + " (" + ctx.InputString(1) +
                                 ")");
    }
    for (int i = 2; i <= 4; ++i) {
      const int64_t size = ShapeElementCount(ctx.input(i).shape);
      if (size != p.psize) {
        throw InvalidArgumentError(ctx.Describe() + ": inputs 'scale', 'B', 'mean' and 'var' must have the same " +
                                   "size, got " + std::to_string(p.psize) + " and " + std::to_string(size) + " (" +
                                   ctx.InputString(i) + ")");
      }
    }
    for (int i = 0; i <= 4; ++i) {
      const DataType t = ctx.input(i).dtype;
      if (t != DataType::kFloat && t != DataType::kDouble && t != DataType::kFloat16 && t != DataType::kBFloat16) {
        throw UnsupportedError(ctx.Describe() + ": data type " + std::string(DataTypeName(t)) + " is not supported");
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
    if (training_) {
      // Running statistics (1, 2) and saved batch statistics (3, 4), shaped like the incoming mean (3) / var (4).
      for (int i = 1; i <= 4; ++i) {
        const InputSpec& like = ctx.input(i % 2 ? 3 : 4);
        if (ctx.output_requested(i)) ctx.SetOutput(i, like.dtype, like.shape);
      }
    }
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor& bias = ctx.required_input(2);
    const Tensor& mean_in = ctx.required_input(3);
    const Tensor& var_in = ctx.required_input(4);
    const Plan& plan = ctx.state<Plan>();
    const int64_t batch = plan.batch, channels = plan.channels, spatial = plan.spatial, psize = plan.psize;
    const bool per_position = plan.per_position;
    Tensor& y = ctx.Output(0);
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      std::vector<A> s = ReadFloats<A>(scale, ctx);
      std::vector<A> b = ReadFloats<A>(bias, ctx);
      std::vector<A> mean = ReadFloats<A>(mean_in, ctx);
      std::vector<A> var = ReadFloats<A>(var_in, ctx);
      const T* in = x.data<T>();
      // Each parameter index p covers `run` contiguous elements per (batch, channel) block.
      const int64_t run = per_position ? 1 : spatial;
      std::vector<A> batch_mean, batch_var;
      if (training_) {
        batch_mean.assign(static_cast<size_t>(psize), A(0));
        batch_var.assign(static_cast<size_t>(psize), A(0));
        const int64_t count = batch * (per_position ? 1 : spatial);
        for (int64_t nb = 0; nb < batch; ++nb) {
          for (int64_t p = 0; p < psize; ++p) {
            const T* xr = in + nb * channels * spatial + p * run;
            A sum = 0;
            for (int64_t i = 0; i < run; ++i) sum += static_cast<A>(static_cast<Acc<T>>(xr[i]));
            batch_mean[static_cast<size_t>(p)] += sum;
          }
        }
        for (auto& m : batch_mean) m /= static_cast<A>(count);
        for (int64_t nb = 0; nb < batch; ++nb) {
          for (int64_t p = 0; p < psize; ++p) {
            const T* xr = in + nb * channels * spatial + p * run;
            const A m = batch_mean[static_cast<size_t>(p)];
            A sq = 0;
            for (int64_t i = 0; i < run; ++i) {
              const A d = static_cast<A>(static_cast<Acc<T>>(xr[i])) - m;
              sq += d * d;
            }
            batch_var[static_cast<size_t>(p)] += sq;
          }
        }
        for (auto& v : batch_var) v /= static_cast<A>(count);
      }
      const std::vector<A>& use_mean = training_ ? batch_mean : mean;
      const std::vector<A>& use_var = training_ ? batch_var : var;
      std::vector<A> mul(static_cast<size_t>(psize)), add(static_cast<size_t>(psize));
      for (size_t p = 0; p < mul.size(); ++p) {
        mul[p] = s[p] / std::sqrt(use_var[p] + static_cast<A>(epsilon_));
        add[p] = b[p] - use_mean[p] * mul[p];
      }
      T* out = y.data<T>();
      const int64_t blocks = batch * psize;
      ParallelFor(ctx.threads(), blocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(run, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t blk = begin; blk < end; ++blk) {
                      const int64_t p = blk % psize;
                      const A m = mul[static_cast<size_t>(p)], a = add[static_cast<size_t>(p)];
                      const T* xr = in + blk * run;
                      T* yr = out + blk * run;
                      for (int64_t i = 0; i < run; ++i) yr[i] = T(static_cast<A>(static_cast<Acc<T>>(xr[i])) * m + a);
                    }
                  });
      if (!training_) return;
      // Running statistics (outputs 1, 2) in the dtype of the incoming mean/var; saved batch stats (3, 4).
      const A mom = static_cast<A>(momentum_);
      auto write = [&](int i, auto&& value) {
        if (!ctx.output_requested(i)) return;
        Tensor& t = ctx.Output(i);
        Dispatch(FloatTypes{}, t.dtype(), ctx, [&](auto otag) {
          using O = decltype(otag);
          O* p = t.data<O>();
          for (int64_t k = 0; k < psize; ++k) p[k] = O(static_cast<Acc<O>>(value(static_cast<size_t>(k))));
        });
      };
      write(1, [&](size_t k) { return mean[k] * mom + batch_mean[k] * (A(1) - mom); });
      write(2, [&](size_t k) { return var[k] * mom + batch_var[k] * (A(1) - mom); });
      write(3, [&](size_t k) { return batch_mean[k]; });
      write(4, [&](size_t k) { return batch_var[k]; });
    });
  }

 private:
  struct Plan {
    int64_t batch = 0, channels = 1, spatial = 1, psize = 0;
    bool per_position = false;
  };

  float epsilon_;
  float momentum_;
  bool training_ = false;
};

}  // namespace

void RegisterBatchNormalizationKernels(KernelRegistry& r) {
  const std::vector<DataType> legacy = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  // 1, 6, 7, 9: same computation (attributes is_test/spatial/consumed_inputs come and go).
  r.Add({.op = "BatchNormalization",
         .since = 1,
         .until = 13,
         .types = {{"T", legacy}},
         .create = MakeKernel<BatchNormalization>});
  // 14: training_mode and bfloat16; mean/var get their own type U. 15: scale/B T1, mean/var T2.
  r.Add({.op = "BatchNormalization",
         .since = 14,
         .types = {{"T", dtypes::Floats()}, {"T1", dtypes::Floats()}, {"T2", dtypes::Floats()}, {"U", dtypes::Floats()}},
         .create = MakeKernel<BatchNormalization>});
}

}  // namespace ferry::ref
