// ONNX Runtime's Gelu family and BiasAdd (com.microsoft, schemas_com_microsoft_fused.cc), elementwise over X with a
// bias along the last dim, computed in float for float16 / bfloat16 (as ONNX Runtime does through its casts):
//   BiasGelu(A, B)         Gelu(A + B): 0.5 v (1 + erf(v / sqrt 2)), v = A + B; B 1-D of A's last dim
//   FastGelu(X, bias?)     0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), v = X (+ bias, 1-D of X's last dim)
//   QuickGelu(X)           x * sigmoid(alpha x), alpha default 1.702 (sigmoid without overflow)
//   BiasAdd(X, bias, skip) X + bias + skip: X and skip [N, S, C] alike, bias [C]
// The Gelu formulas are the ref Gelu kernel's (semantics::GeluErf / GeluTanh), QuickGelu Swish's (SwishValue).
// (com.microsoft::Gelu is the ref Gelu kernel itself, registered in gelu.cc.)
#include <algorithm>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/ref/gelu.h"
#include "kernels/ref/ort_gelu.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using Op = OrtBiasOp;

// Checks that `bias` (input `i`) is 1-D with X's last dim, naming both.
void CheckBias(PrepareContext& ctx, int i, const char* name) {
  const InputSpec& x = ctx.input(0);
  const InputSpec& bias = ctx.input(i);
  if (bias.dtype != x.dtype) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + name + " (" + ctx.InputString(i) +
                               ") must have X's element type (" + ctx.InputString(0) + ")");
  }
  if (x.shape.empty() || bias.shape.size() != 1 || bias.shape[0] != x.shape.back()) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + name + " has shape " + ShapeToString(bias.shape) +
                               ", expected [" + (x.shape.empty() ? std::string("?") : std::to_string(x.shape.back())) +
                               "] (1-D of the last dim of " + ctx.InputString(0) + ")");
  }
}

}  // namespace

void PrepareOrtBiasOp(PrepareContext& ctx, OrtBiasOp op) {
  const InputSpec& x = ctx.tensor_input(0);
  switch (op) {
    case Op::kBiasGelu:
      ctx.tensor_input(1);  // required
      CheckBias(ctx, 1, "B");
      break;
    case Op::kFastGelu:
      if (ctx.input(1).is_tensor()) CheckBias(ctx, 1, "bias");
      break;
    case Op::kQuickGelu: break;
    case Op::kBiasAdd: {
      if (x.shape.size() != 3) {
        throw InvalidArgumentError(ctx.Describe() + ": input X (" + ctx.InputString(0) + ") must be 3-D [N, S, C]");
      }
      ctx.tensor_input(1);  // required
      CheckBias(ctx, 1, "bias");
      const InputSpec& skip = ctx.tensor_input(2);
      if (skip.dtype != x.dtype || skip.shape != x.shape) {
        throw InvalidArgumentError(ctx.Describe() + ": input skip (" + ctx.InputString(2) +
                                   ") must have X's element type and shape (" + ctx.InputString(0) + ")");
      }
      break;
    }
  }
  ctx.SetOutput(0, x.dtype, x.shape);
}

namespace {

class OrtGeluKernel : public OpKernel {
 public:
  OrtGeluKernel(const ir::Node& node, Op op) : op_(op), alpha_(node.GetFloat("alpha", 1.702f)) {}

  void Prepare(PrepareContext& ctx) const override { PrepareOrtBiasOp(ctx, op_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* bias = ctx.input(1);
    const Tensor* skip = ctx.input(2);
    Tensor& y = ctx.OutputUninitialized(0);
    const int64_t n = x.size();
    if (n == 0) return;
    const int64_t c = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);  // n > 0: every dim > 0
    const float alpha = alpha_;
    const Op op = op_;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* xp = x.data<T>();
      const T* bp = bias ? bias->data<T>() : nullptr;
      const T* sp = op == Op::kBiasAdd ? skip->data<T>() : nullptr;
      T* yp = y.data<T>();
      // Whole rows per chunk, so the bias index is a plain counter.
      const int64_t rows = n / c;
      ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, kElementwiseGrain / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t j = 0; j < c; ++j) {
            const int64_t i = r * c + j;
            A v = static_cast<A>(xp[i]);
            if (bp) v = v + static_cast<A>(bp[j]);
            switch (op) {
              case Op::kBiasGelu: v = GeluErf(v); break;
              case Op::kFastGelu: v = GeluTanh(v); break;
              case Op::kQuickGelu: v = SwishValue(v, alpha); break;
              case Op::kBiasAdd: v = v + static_cast<A>(sp[i]); break;
            }
            yp[i] = static_cast<T>(v);
          }
        }
      });
    });
  }

 private:
  Op op_;
  float alpha_;  // QuickGelu's
};

template <Op kOp>
std::unique_ptr<OpKernel> Make(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<OrtGeluKernel>(node, kOp);
}

}  // namespace

void RegisterOrtGeluKernels(KernelRegistry& r) {
  const std::string ms = "com.microsoft";
  r.Add(
      {.op = "BiasGelu", .domain = ms, .since = 1, .types = {{"T", dtypes::Floats()}}, .create = Make<Op::kBiasGelu>});
  r.Add(
      {.op = "FastGelu", .domain = ms, .since = 1, .types = {{"T", dtypes::Floats()}}, .create = Make<Op::kFastGelu>});
  r.Add({.op = "QuickGelu",
         .domain = ms,
         .since = 1,
         .types = {{"T", dtypes::Floats()}},
         .create = Make<Op::kQuickGelu>});
  r.Add({.op = "BiasAdd",
         .domain = ms,
         .since = 1,
         .types = {{"T", {DataType::kFloat16, DataType::kFloat}}},
         .create = Make<Op::kBiasAdd>});
}

}  // namespace ferry::ref
