// The skip normalizations (skip_layer_normalization.h), computed by their definition in the accumulator type (float
// for float16 / bfloat16): S = X + Skip (+ bias), then over the dims [axis, rank) of each row (the last dim for ONNX
// Runtime's ops) either LayerNormalization, mean and then the variance about the mean, Y = (S - mean) / sqrt(var +
// epsilon) * gamma (+ beta), or for SkipSimplifiedLayerNormalization RMS normalization, Y = S / sqrt(mean(S^2) +
// epsilon) * gamma. The sum output is S (rounded to X's type), the statistics mean (0 for the RMS form, as ONNX
// Runtime writes it) and inv_std_var = 1 / sqrt(var + epsilon) (1 / sqrt(mean(S^2) + epsilon)), float32. Skip
// broadcasts as ONNX Runtime's kernels read it: element i of X adds Skip's element i % size(Skip). epsilon defaults
// to 1e-5 for ai.ferry's op and 1e-12 for ONNX Runtime's. ai.ferry's op is what fuse_skip_layer_norm makes of a
// residual Add followed by a LayerNormalization; ONNX Runtime's are what its transformer optimizer writes. Prepare
// checks the inputs (CheckSkipLayerNorm, shared with cpu); Compute runs the rows.
#include "kernels/ref/skip_layer_normalization.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {

SkipNormForm SkipNormFormOf(const ir::Node& node) {
  if (node.domain() != "com.microsoft") return {};
  SkipNormForm f{.simplified = node.op_type() == "SkipSimplifiedLayerNormalization",
                 .beta = 3,
                 .bias = 4,
                 .mean = 1,
                 .inv = 2,
                 .sum = 3,
                 .default_epsilon = 1e-12f,
                 .x_name = "input",
                 .skip_name = "skip"};
  if (f.simplified) f.beta = -1, f.bias = 3;
  return f;
}

SkipLayerNormShape CheckSkipLayerNorm(const Tensor& x, const Tensor& skip, const Tensor& gamma, const Tensor* beta,
                                      const Tensor* bias, int64_t axis, const SkipNormForm& form,
                                      const std::string& what) {
  const std::string xn = form.x_name;
  if (!IsFloatingPoint(x.dtype())) {
    throw InvalidArgumentError(what + ": input '" + xn + "' must be floating-point, got " +
                               std::string(DataTypeName(x.dtype())));
  }
  for (const auto& [t, name] : {std::pair{&skip, form.skip_name}, {&gamma, "gamma"}, {beta, "beta"}, {bias, "bias"}}) {
    if (t && t->dtype() != x.dtype()) {
      throw InvalidArgumentError(what + ": input '" + name + "' must have " + xn + "'s element type " +
                                 std::string(DataTypeName(x.dtype())) + ", got " +
                                 std::string(DataTypeName(t->dtype())));
    }
  }
  const int64_t rank = x.rank();
  if (rank == 0) throw InvalidArgumentError(what + ": input '" + xn + "' must have rank >= 1");
  const int64_t a = NormalizeAxis(axis, rank, what);
  SkipLayerNormShape s{1, 1, skip.size()};
  for (int64_t d = 0; d < a; ++d) s.rows *= x.dim(d);
  for (int64_t d = a; d < rank; ++d) s.n *= x.dim(d);
  // Skip's dims after its leading 1s must be X's trailing dims.
  int64_t lead = 0;
  while (lead < skip.rank() && skip.dim(lead) == 1) ++lead;
  bool ok = skip.rank() <= rank;
  for (int64_t d = lead; ok && d < skip.rank(); ++d) ok = skip.dim(d) == x.dim(rank - skip.rank() + d);
  if (!ok) {
    throw InvalidArgumentError(what + ": input '" + form.skip_name + "' of shape " + ShapeToString(skip.shape()) +
                               " is neither " + xn + "'s shape " + ShapeToString(x.shape()) + " nor " + xn +
                               "'s trailing dims");
  }
  for (const auto& [t, name] : {std::pair{&gamma, "gamma"}, {beta, "beta"}, {bias, "bias"}}) {
    if (t && t->size() != s.n) {
      throw InvalidArgumentError(what + ": input '" + name + "' of shape " + ShapeToString(t->shape()) + " has " +
                                 std::to_string(t->size()) + " elements, expected " + std::to_string(s.n) +
                                 " (the normalized dims of " + xn + " " + ShapeToString(x.shape()) + ")");
    }
  }
  return s;
}

void PrepareSkipLayerNorm(PrepareContext& ctx, const SkipNormForm& form, int64_t axis) {
  const InputSpec& x = ctx.tensor_input(0);
  // The shared check reads dtypes and shapes only: tensors without data stand for the inputs.
  const auto spec = [](const InputSpec& in) { return Tensor::Wrap(in.dtype, in.shape, nullptr, nullptr); };
  const auto optional = [&](int i) { return i >= 0 && ctx.has_input(i) ? spec(ctx.tensor_input(i)) : Tensor(); };
  const Tensor beta = optional(form.beta), bias = optional(form.bias);
  const SkipLayerNormShape s = CheckSkipLayerNorm(spec(x), spec(ctx.tensor_input(1)), spec(ctx.tensor_input(2)),
                                                  form.beta >= 0 && ctx.has_input(form.beta) ? &beta : nullptr,
                                                  form.bias >= 0 && ctx.has_input(form.bias) ? &bias : nullptr, axis,
                                                  form, ctx.Describe());
  ctx.EmplaceState(s);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t a = NormalizeAxis(axis, rank, ctx.Describe());
  Shape stat_shape(x.shape.begin(), x.shape.begin() + a);
  stat_shape.resize(static_cast<size_t>(rank), 1);
  ctx.SetOutput(0, x.dtype, x.shape);
  for (int i = 1; i < ctx.output_count(); ++i) {
    if (!ctx.output_requested(i)) {
      ctx.SetOutputDynamic(i);  // omitted: Compute does not write it
    } else if (i == form.sum) {
      ctx.SetOutput(i, x.dtype, x.shape);
    } else if (i == form.mean || i == form.inv) {
      ctx.SetOutput(i, DataType::kFloat, stat_shape);
    } else {
      ctx.SetOutputDynamic(i);
    }
  }
}

namespace {

class SkipLayerNormalization : public OpKernel {
 public:
  explicit SkipLayerNormalization(const ir::Node& node)
      : form_(SkipNormFormOf(node)),
        axis_(node.GetInt("axis", -1)),
        epsilon_(node.GetFloat("epsilon", form_.default_epsilon)) {}

  // The inputs' checks (shared with cpu), the rows; the requested outputs.
  void Prepare(PrepareContext& ctx) const override { PrepareSkipLayerNorm(ctx, form_, axis_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& skip = ctx.required_input(1);
    const Tensor& gamma = ctx.required_input(2);
    const Tensor* beta = form_.beta >= 0 ? ctx.input(form_.beta) : nullptr;
    const Tensor* bias = form_.bias >= 0 ? ctx.input(form_.bias) : nullptr;
    const SkipLayerNormShape& s = ctx.state<SkipLayerNormShape>();
    Tensor& y = ctx.Output(0);
    const auto requested = [&](int i) { return i >= 0 && ctx.output_requested(i) ? &ctx.Output(i) : nullptr; };
    Tensor* sum_out = requested(form_.sum);
    float* mean_out = form_.mean >= 0 && ctx.output_requested(form_.mean) ? ctx.Output(form_.mean).data<float>()
                                                                          : nullptr;
    float* inv_out = form_.inv >= 0 && ctx.output_requested(form_.inv) ? ctx.Output(form_.inv).data<float>() : nullptr;
    if (x.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const auto read = [](const Tensor* t) {
        std::vector<A> v;
        if (!t) return v;
        const T* p = t->data<T>();
        v.reserve(static_cast<size_t>(t->size()));
        for (int64_t i = 0; i < t->size(); ++i) v.push_back(static_cast<A>(p[i]));
        return v;
      };
      const std::vector<A> w = read(&gamma), b = read(beta), c = read(bias);
      const T* xp = x.data<T>();
      const T* kp = skip.data<T>();
      T* yp = y.data<T>();
      T* sp = sum_out ? sum_out->data<T>() : nullptr;
      const int64_t n = s.n;
      const A eps = static_cast<A>(epsilon_);
      ParallelFor(ctx.threads(), s.rows, std::max<int64_t>(1, 8192 / n), [&](int64_t begin, int64_t end) {
        std::vector<A> row(static_cast<size_t>(n));
        for (int64_t r = begin; r < end; ++r) {
          A total = 0, squares = 0;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t k = r * n + i;
            A v = static_cast<A>(xp[k]) + static_cast<A>(kp[k % s.skip_size]);
            if (!c.empty()) v += c[static_cast<size_t>(i)];
            row[static_cast<size_t>(i)] = v;
            total += v;
            squares += v * v;
            if (sp) sp[k] = static_cast<T>(v);
          }
          A mean = 0, inv;
          if (form_.simplified) {
            inv = A(1) / std::sqrt(squares / static_cast<A>(n) + eps);
          } else {
            mean = total / static_cast<A>(n);
            A sq = 0;
            for (int64_t i = 0; i < n; ++i) {
              const A d = row[static_cast<size_t>(i)] - mean;
              sq += d * d;
            }
            inv = A(1) / std::sqrt(sq / static_cast<A>(n) + eps);
          }
          for (int64_t i = 0; i < n; ++i) {
            A v = (row[static_cast<size_t>(i)] - mean) * inv * w[static_cast<size_t>(i)];
            if (!b.empty()) v += b[static_cast<size_t>(i)];
            yp[r * n + i] = static_cast<T>(v);
          }
          if (mean_out) mean_out[r] = static_cast<float>(mean);
          if (inv_out) inv_out[r] = static_cast<float>(inv);
        }
      });
    });
  }

 private:
  SkipNormForm form_;
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void RegisterSkipLayerNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "SkipLayerNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<SkipLayerNormalization>});
  // ONNX Runtime's two (what its transformer optimizer writes): the same kernel, in their input/output layout.
  const std::vector<DataType> types = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    r.Add({.op = op,
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", types}, {"U", {DataType::kFloat}}},
           .create = MakeKernel<SkipLayerNormalization>});
  }
}

}  // namespace ferry::ref
