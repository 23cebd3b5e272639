// RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike (opsets 1, 22), Multinomial (7, 22) and
// Bernoulli (15, 22).
//
// Generator: std::mt19937_64, seeded from the `seed` attribute (its float32 bit pattern) or, when absent, from a
// fixed per-node seed (FNV-1a of the node's first output name). Every Compute call starts from that seed, so a
// node gives the same output on every run (and is thread-safe, with no state between runs). Uniform doubles take
// the top 53 bits of one draw (u in [0, 1)); normals use Box-Muller on two uniforms; categorical draws invert
// the CDF. These choices are Ferry's own and fully specified here, so results are reproducible across platforms
// and standard libraries — but they cannot match the values of other implementations' generators (numpy,
// ONNX Runtime, PyTorch), so ONNX test cases with random outputs stay expected failures.
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

uint64_t NodeSeed(const ir::Node& node) {
  if (const ir::Attribute* a = node.attr("seed")) {
    (void)node.GetFloat("seed", 0.0f);  // type check
    return 0x9E3779B97F4A7C15ull ^ std::bit_cast<uint32_t>(a->f);
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const std::string key = node.output(0) ? node.output(0)->name() : node.name();
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller; u1 in (0, 1]).
  double Normal() {
    const double u1 = 1.0 - Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 gen_;
};

DataType AttrDataType(const ir::Node& node, DataType def) {
  const int64_t dt = node.GetInt("dtype", static_cast<int64_t>(def));
  if (!IsKnownDataType(static_cast<int32_t>(dt)))
    throw InvalidModelError(node.Describe() + ": dtype " + std::to_string(dt) + " is not a data type");
  return static_cast<DataType>(dt);
}

// Throws UnsupportedError naming the node unless `dtype` is one of `list` (what Dispatch over it accepts).
template <typename... Ts>
void CheckType(TypeList<Ts...>, DataType dtype, const PrepareContext& ctx) {
  if (!((dtype == kDataTypeOf<Ts>) || ...)) {
    throw UnsupportedError(ctx.Describe() + ": data type " + std::string(DataTypeName(dtype)) + " is not supported");
  }
}

using BernoulliOutTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                   uint16_t, uint32_t, uint64_t, bool>;

template <typename Fn>
void FillFloats(Tensor& y, const KernelContext& ctx, Fn&& next) {
  Dispatch(FloatTypes{}, y.dtype(), ctx, [&](auto tag) {
    using T = decltype(tag);
    T* o = y.data<T>();
    for (int64_t i = 0; i < y.size(); ++i) o[i] = T(static_cast<Acc<T>>(next()));
  });
}

// RandomUniform / RandomNormal (shape from the attribute) and their *Like forms (shape, and by default dtype,
// from the input).
template <bool kNormal, bool kLike>
class RandomFill : public OpKernel {
 public:
  explicit RandomFill(const ir::Node& node)
      : seed_(NodeSeed(node)),
        a_(node.GetFloat(kNormal ? "mean" : "low", 0.0f)),
        b_(node.GetFloat(kNormal ? "scale" : "high", 1.0f)),
        has_dtype_(node.has_attr("dtype")),
        dtype_(AttrDataType(node, DataType::kFloat)) {
    if constexpr (!kLike) {
      shape_ = node.GetInts("shape");
      if (!node.has_attr("shape")) throw InvalidModelError(node.Describe() + ": attribute 'shape' is required");
      for (int64_t d : shape_)
        if (d < 0) throw InvalidModelError(node.Describe() + ": shape has a negative dimension");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    Shape shape = shape_;
    DataType dt = dtype_;
    if constexpr (kLike) {
      const InputSpec& x = ctx.tensor_input(0);
      shape = x.shape;
      if (!has_dtype_) dt = x.dtype;
    }
    CheckType(FloatTypes{}, dt, ctx);
    ctx.SetOutput(0, dt, std::move(shape));
  }

  void Compute(KernelContext& ctx) const override {
    Tensor& y = ctx.Output(0);
    Rng rng(seed_);
    const double a = a_, b = b_;
    if constexpr (kNormal) {
      FillFloats(y, ctx, [&] { return a + b * rng.Normal(); });
    } else {
      FillFloats(y, ctx, [&] { return a + (b - a) * rng.Uniform(); });
    }
  }

 private:
  uint64_t seed_;
  double a_, b_;
  bool has_dtype_;
  DataType dtype_;
  Shape shape_;
};

// Multinomial: input [batch, classes] of unnormalised log-probabilities; output [batch, sample_size] class
// indices.
class Multinomial : public OpKernel {
 public:
  explicit Multinomial(const ir::Node& node)
      : seed_(NodeSeed(node)), samples_(node.GetInt("sample_size", 1)), dtype_(AttrDataType(node, DataType::kInt32)) {
    if (samples_ < 1) throw InvalidModelError(node.Describe() + ": sample_size must be positive");
    if (dtype_ != DataType::kInt32 && dtype_ != DataType::kInt64)
      throw InvalidModelError(node.Describe() + ": dtype must be int32 or int64");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 2)
      throw InvalidArgumentError(ctx.Describe() + ": input must have shape [batch_size, class_size], got " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    const int64_t batch = x.shape[0], classes = x.shape[1];
    if (classes < 1 && batch > 0)
      throw InvalidArgumentError(ctx.Describe() + ": class_size must be positive (" + ctx.InputString(0) + ")");
    ctx.SetOutput(0, dtype_, {batch, samples_});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t batch = x.dim(0), classes = x.dim(1);
    Tensor& y = ctx.Output(0);
    Rng rng(seed_);
    std::vector<double> cdf(static_cast<size_t>(std::max<int64_t>(classes, 0)));
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      for (int64_t b = 0; b < batch; ++b) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) {
          mx = std::max(mx, static_cast<double>(static_cast<Acc<T>>(in[b * classes + c])));
        }
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const double v = static_cast<double>(static_cast<Acc<T>>(in[b * classes + c]));
          sum += std::isinf(mx) && mx < 0 ? 1.0 : std::exp(v - mx);
          cdf[static_cast<size_t>(c)] = sum;
        }
        for (int64_t s = 0; s < samples_; ++s) {
          const double u = rng.Uniform() * sum;
          int64_t k = 0;
          while (k < classes - 1 && !(u < cdf[static_cast<size_t>(k)])) ++k;
          if (dtype_ == DataType::kInt32) {
            y.data<int32_t>()[b * samples_ + s] = static_cast<int32_t>(k);
          } else {
            y.data<int64_t>()[b * samples_ + s] = k;
          }
        }
      }
    });
  }

 private:
  uint64_t seed_;
  int64_t samples_;
  DataType dtype_;
};

// Bernoulli: y = 1 with probability x (x in [0, 1]), else 0; output dtype `dtype` or the input's.
class Bernoulli : public OpKernel {
 public:
  explicit Bernoulli(const ir::Node& node)
      : seed_(NodeSeed(node)), has_dtype_(node.has_attr("dtype")), dtype_(AttrDataType(node, DataType::kFloat)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const DataType dt = has_dtype_ ? dtype_ : x.dtype;
    CheckType(BernoulliOutTypes{}, dt, ctx);
    ctx.SetOutput(0, dt, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    std::vector<uint8_t> bits(static_cast<size_t>(x.size()));
    Rng rng(seed_);
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        const double p = static_cast<double>(static_cast<Acc<T>>(in[i]));
        if (!(p >= 0.0 && p <= 1.0))
          throw InvalidArgumentError(ctx.Describe() + ": probability " + std::to_string(p) + " at element " +
                                     std::to_string(i) + " is outside [0, 1]");
        bits[static_cast<size_t>(i)] = rng.Uniform() < p ? 1 : 0;
      }
    });
    Dispatch(BernoulliOutTypes{}, y.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      T* o = y.data<T>();
      for (int64_t i = 0; i < y.size(); ++i) o[i] = T(static_cast<Acc<T>>(bits[static_cast<size_t>(i)]));
    });
  }

 private:
  uint64_t seed_;
  bool has_dtype_;
  DataType dtype_;
};

}  // namespace

void RegisterRandomKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const std::vector<DataType> fb = dtypes::Concat(f, {DataType::kBFloat16});
  const std::vector<DataType> ind = {DataType::kInt32, DataType::kInt64};
  // The *Like ops accept any input type (only its shape, and its dtype when `dtype` is absent, are used).
  const std::vector<DataType> like_in = dtypes::All();
  r.Add({.op = "RandomUniform", .since = 1, .until = 21, .types = {{"T", f}},
         .create = MakeKernel<RandomFill<false, false>>});
  r.Add({.op = "RandomUniform", .since = 22, .types = {{"T", fb}}, .create = MakeKernel<RandomFill<false, false>>});
  r.Add({.op = "RandomNormal", .since = 1, .until = 21, .types = {{"T", f}},
         .create = MakeKernel<RandomFill<true, false>>});
  r.Add({.op = "RandomNormal", .since = 22, .types = {{"T", fb}}, .create = MakeKernel<RandomFill<true, false>>});
  r.Add({.op = "RandomUniformLike", .since = 1, .until = 21, .types = {{"T1", like_in}, {"T2", f}},
         .create = MakeKernel<RandomFill<false, true>>});
  r.Add({.op = "RandomUniformLike", .since = 22, .types = {{"T1", like_in}, {"T2", fb}},
         .create = MakeKernel<RandomFill<false, true>>});
  r.Add({.op = "RandomNormalLike", .since = 1, .until = 21, .types = {{"T1", like_in}, {"T2", f}},
         .create = MakeKernel<RandomFill<true, true>>});
  r.Add({.op = "RandomNormalLike", .since = 22, .types = {{"T1", like_in}, {"T2", fb}},
         .create = MakeKernel<RandomFill<true, true>>});
  r.Add({.op = "Multinomial", .since = 7, .until = 21, .types = {{"T1", f}, {"T2", ind}},
         .create = MakeKernel<Multinomial>});
  r.Add({.op = "Multinomial", .since = 22, .types = {{"T1", fb}, {"T2", ind}}, .create = MakeKernel<Multinomial>});
  const std::vector<DataType> bern_out = dtypes::Concat(
      fb, {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64, DataType::kInt8,
           DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kBool});
  r.Add({.op = "Bernoulli", .since = 15, .until = 21, .types = {{"T1", f}, {"T2", bern_out}},
         .create = MakeKernel<Bernoulli>});
  r.Add({.op = "Bernoulli", .since = 22, .types = {{"T1", fb}, {"T2", bern_out}}, .create = MakeKernel<Bernoulli>});
}

}  // namespace ferry::ref
