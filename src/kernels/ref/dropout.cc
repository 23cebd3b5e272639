// Dropout, all versions. In inference (every opset < 12, and opset 12+ unless the training_mode input is true)
// the output is the input itself (shared, not copied) and the mask is all ones (bool from opset 10, T before).
// Training (opset 12+): each element is kept with probability 1 - ratio and scaled by 1 / (1 - ratio); the mask
// marks kept elements. The draws reproduce numpy's legacy generator (np.random.seed(seed); uniform(0, 1) >= ratio:
// MT19937 with init_genrand seeding, 53-bit doubles from two 32-bit outputs), which is how the ONNX test data
// was made, so a given `seed` attribute yields ONNX's masks; without `seed` the seed is random, except in a
// deterministic session (KernelContext::deterministic), where it is the low 32 bits of the FNV-1a hash of the
// node's first output name (the rule random_ops.cc uses for unseeded random ops), the same on every run.
#include <random>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Dropout : public OpKernel {
 public:
  explicit Dropout(const ir::Node& node)
      : opset_(node.opset()),
        ratio_attr_(node.GetFloat("ratio", 0.5f)),
        has_seed_(node.has_attr("seed")),
        seed_(node.GetInt("seed", 0)),
        fixed_seed_(OutputNameSeed(node)) {}

  // The ratio and training_mode inputs' shapes and types. Y is X itself (a view) in inference, a new tensor in
  // training with a nonzero ratio: a view unless the known inputs rule it out.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    bool may_share = true;
    if (opset_ >= 12) {
      if (ctx.has_input(1)) {
        const InputSpec& r = ctx.tensor_input(1);
        if (ShapeElementCount(r.shape) != 1) {
          throw InvalidArgumentError(ctx.Describe() + ": input 'ratio' must be a scalar, got shape " +
                                     ShapeToString(r.shape));
        }
        if (r.dtype != DataType::kFloat && r.dtype != DataType::kDouble && r.dtype != DataType::kFloat16 &&
            r.dtype != DataType::kBFloat16) {
          throw UnsupportedError(ctx.Describe() + ": data type " + std::string(DataTypeName(r.dtype)) +
                                 " is not supported");
        }
      }
      if (ctx.has_input(2)) {
        const InputSpec& t = ctx.tensor_input(2);
        if (t.dtype != DataType::kBool || ShapeElementCount(t.shape) != 1) {
          throw InvalidArgumentError(ctx.Describe() + ": input 'training_mode' must be a bool scalar, got " +
                                     ctx.InputString(2));
        }
        const Tensor* training = ctx.constant(2);
        const Tensor* ratio = ctx.constant(1);
        if (training && training->data<bool>()[0] && (!ctx.has_input(1) || (ratio && Ratio(*ratio) != 0.f))) {
          may_share = false;
        }
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
    if (may_share) ctx.output(0).view_of = 0;
    if (ctx.output_requested(1)) ctx.SetOutput(1, opset_ >= 10 ? DataType::kBool : x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    bool training = false;
    float ratio = ratio_attr_;
    if (opset_ >= 12) {
      const Tensor* r = ctx.input(1);
      ratio = r ? Ratio(*r) : 0.5f;
      if (const Tensor* t = ctx.input(2)) training = t->data<bool>()[0];
    }
    if (training && (ratio < 0.f || ratio > 1.f)) {
      throw InvalidArgumentError(ctx.Describe() + ": ratio must be in [0, 1), got " + std::to_string(ratio));
    }
    const bool want_mask = ctx.output_requested(1);
    if (!training || ratio == 0.f) {
      ctx.SetOutput(0, Value(x));
      if (want_mask) FillOnes(ctx.Output(1), ctx);
      return;
    }
    Tensor& y = ctx.Output(0);
    Tensor* mask = want_mask ? &ctx.Output(1) : nullptr;  // bool: training needs opset 12
    std::mt19937 rng(has_seed_             ? static_cast<uint32_t>(seed_)
                     : ctx.deterministic() ? fixed_seed_
                                           : std::random_device{}());
    auto uniform = [&rng]() {  // numpy's random_sample()
      const double a = static_cast<double>(rng() >> 5), b = static_cast<double>(rng() >> 6);
      return (a * 67108864.0 + b) / 9007199254740992.0;
    };
    const float keep_scale = ratio < 1.f ? 1.f / (1.f - ratio) : 0.f;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        const bool keep = uniform() >= static_cast<double>(ratio);
        out[i] = keep ? T(static_cast<A>(in[i]) * static_cast<A>(keep_scale)) : T(A(0));
        if (mask) mask->data<bool>()[i] = keep;
      }
    });
  }

 private:
  // The ratio input's value (a float scalar: Prepare checked).
  static float Ratio(const Tensor& r) {
    switch (r.dtype()) {
      case DataType::kDouble: return static_cast<float>(r.data<double>()[0]);
      case DataType::kFloat16: return static_cast<float>(r.data<Float16>()[0]);
      case DataType::kBFloat16: return static_cast<float>(r.data<BFloat16>()[0]);
      default: return r.data<float>()[0];
    }
  }

  static uint32_t OutputNameSeed(const ir::Node& node) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : node.output(0) ? node.output(0)->name() : node.name()) {
      h ^= c;
      h *= 1099511628211ull;
    }
    return static_cast<uint32_t>(h);
  }

  static void FillOnes(Tensor& t, const KernelContext& ctx) {
    if (t.dtype() == DataType::kBool) {
      std::fill(t.data<bool>(), t.data<bool>() + t.size(), true);
      return;
    }
    Dispatch(FloatTypes{}, t.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      std::fill(t.data<T>(), t.data<T>() + t.size(), T(Acc<T>(1)));
    });
  }

  int64_t opset_;
  float ratio_attr_;
  bool has_seed_;
  int64_t seed_;
  uint32_t fixed_seed_;  // the seed of an unseeded node in a deterministic session
};

}  // namespace

std::unique_ptr<OpKernel> CreateDropoutKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Dropout>(node, options);
}

void RegisterDropoutKernels(KernelRegistry& r) {
  const std::vector<DataType> legacy = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  // 1, 6, 7, 10: ratio attribute, inference only (mask becomes bool in 10).
  r.Add({.op = "Dropout", .since = 1, .until = 11, .types = {{"T", legacy}, {"T1", {DataType::kBool}}},
         .create = CreateDropoutKernel});
  // 12, 13, 22: ratio and training_mode inputs, seed attribute.
  r.Add({.op = "Dropout",
         .since = 12,
         .types = {{"T", dtypes::Floats()}, {"T1", dtypes::Floats()}, {"T2", {DataType::kBool}}},
         .create = CreateDropoutKernel});
}

}  // namespace ferry::ref
