// Unary float32 elementwise ops on the cpu backend: Relu LeakyRelu Clip Neg Abs Sqrt Exp Sigmoid Tanh Erf Gelu, each
// with AVX-512F, AVX2+FMA and scalar variants registered best first (the registry takes the first the target
// supports). The vector variants are simd_kernels.inc; Exp Sigmoid Tanh Erf Gelu there are polynomial
// approximations whose measured error against glibc (what ref calls) is documented at its top (<= 3 ulp; Gelu
// within 4.8e-7 absolute). The scalar variants compute exactly what ref does, with the same libm calls.
// NaN, ±inf and ±0 behave as in ref: Relu maps NaN to 0 (ref's `x > 0 ? x : 0`), Clip keeps NaN, Sigmoid(-inf) = 0,
// Tanh(±inf) = ±1, Exp overflows to inf exactly where expf does.
//
// Opsets: the versions before 6 (consumed_inputs) are left to ref; Clip 6-10 reads min/max attributes, Clip 11+ the
// optional scalar inputs at run time (their types and shapes checked by Prepare); Gelu is opset 20 (approximate =
// "none" or "tanh").
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

using simd::UnaryParams;
using UnaryFn = void (*)(const float* x, float* y, int64_t n, const UnaryParams& params);

// ---- scalar variants: ref's expressions ----------------------------------------------------------------------

namespace scalar {

struct ReluOp {
  static float Apply(float x, const UnaryParams&) { return x > 0.0f || x != x ? x : 0.0f; }
};
struct LeakyReluOp {
  static float Apply(float x, const UnaryParams& p) { return x < 0.0f ? x * p.alpha : x; }
};
struct ClipOp {
  static float Apply(float x, const UnaryParams& p) {
    if (x != x) return x;
    return std::min(std::max(x, p.lo), p.hi);
  }
};
struct NegOp {
  static float Apply(float x, const UnaryParams&) { return -x; }
};
struct AbsOp {
  static float Apply(float x, const UnaryParams&) { return std::fabs(x); }
};
struct SqrtOp {
  static float Apply(float x, const UnaryParams&) { return std::sqrt(x); }
};
struct ExpOp {
  static float Apply(float x, const UnaryParams&) { return std::exp(x); }
};
struct SigmoidOp {
  static float Apply(float x, const UnaryParams&) {
    return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
  }
};
struct TanhOp {
  static float Apply(float x, const UnaryParams&) { return std::tanh(x); }
};
struct ErfOp {
  static float Apply(float x, const UnaryParams&) { return std::erf(x); }
};
struct GeluErfOp {
  static float Apply(float x, const UnaryParams&) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }
};
struct GeluTanhOp {
  static float Apply(float x, const UnaryParams&) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
};

template <class Op>
void Unary(const float* x, float* y, int64_t n, const UnaryParams& params) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(x[i], params);
}

}  // namespace scalar

// ---- the kernel ----------------------------------------------------------------------------------------------

// Elements per thread chunk: cheap ops are memory bound, the transcendental ones cost ~20-40 flops an element.
constexpr int64_t kCheapGrain = 1 << 16;
constexpr int64_t kTranscendentalGrain = 1 << 14;

class UnaryKernel final : public OpKernel {
 public:
  UnaryKernel(UnaryFn fn, UnaryParams params, int64_t grain, bool clip_inputs)
      : fn_(fn), params_(params), grain_(grain), clip_inputs_(clip_inputs) {}

  // X must be float32; Clip 11+'s bounds, when given, float32 scalars (one element). Y has X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected float32");
    }
    if (clip_inputs_) {
      CheckBound(ctx, 1, "min");
      CheckBound(ctx, 2, "max");
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    UnaryParams p = params_;
    if (clip_inputs_) {
      p.lo = Bound(ctx, 1, std::numeric_limits<float>::lowest());
      p.hi = Bound(ctx, 2, std::numeric_limits<float>::max());
    }
    Tensor& y = ctx.OutputUninitialized(0);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    ParallelFor(ctx.threads(), x.size(), grain_, [&](int64_t s, int64_t e) { fn_(px + s, py + s, e - s, p); });
  }

 private:
  // Clip 11+: the optional input i is absent, or a one-element float32 tensor.
  static void CheckBound(const PrepareContext& ctx, int i, const char* name) {
    if (!ctx.has_input(i)) return;
    const InputSpec& t = ctx.tensor_input(i);
    if (t.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' (" + ctx.InputString(i) +
                                 "): expected float32");
    }
    if (ShapeElementCount(t.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' must be a scalar, got " +
                                 ctx.InputString(i));
    }
  }

  // Clip 11+: the value of the optional input i (checked by CheckBound), or `def` when it is omitted.
  static float Bound(const KernelContext& ctx, int i, float def) {
    const Tensor* t = ctx.input(i);
    return t ? t->data<float>()[0] : def;
  }

  UnaryFn fn_;
  UnaryParams params_;
  int64_t grain_;
  bool clip_inputs_;
};

// ---- registration --------------------------------------------------------------------------------------------

// One ISA's functions for an op; `alt` is Gelu's tanh approximation.
struct IsaFns {
  UnaryFn fn;
  UnaryFn alt = nullptr;
};
using Maker = std::unique_ptr<OpKernel> (*)(const ir::Node& node, IsaFns fns);

std::unique_ptr<OpKernel> MakeCheap(const ir::Node&, IsaFns f) {
  return std::make_unique<UnaryKernel>(f.fn, UnaryParams{}, kCheapGrain, false);
}
std::unique_ptr<OpKernel> MakeTranscendental(const ir::Node&, IsaFns f) {
  return std::make_unique<UnaryKernel>(f.fn, UnaryParams{}, kTranscendentalGrain, false);
}
std::unique_ptr<OpKernel> MakeLeakyRelu(const ir::Node& node, IsaFns f) {
  return std::make_unique<UnaryKernel>(f.fn, UnaryParams{.alpha = node.GetFloat("alpha", 0.01f)}, kCheapGrain, false);
}
std::unique_ptr<OpKernel> MakeClipAttributes(const ir::Node& node, IsaFns f) {
  UnaryParams p{.lo = node.GetFloat("min", -FLT_MAX), .hi = node.GetFloat("max", FLT_MAX)};
  return std::make_unique<UnaryKernel>(f.fn, p, kCheapGrain, false);
}
std::unique_ptr<OpKernel> MakeClipInputs(const ir::Node&, IsaFns f) {
  return std::make_unique<UnaryKernel>(f.fn, UnaryParams{}, kCheapGrain, true);
}
std::unique_ptr<OpKernel> MakeGelu(const ir::Node& node, IsaFns f) {
  const std::string mode = node.GetString("approximate", "none");
  if (mode != "none" && mode != "tanh") {
    throw InvalidModelError(node.Describe() + ": Gelu approximate must be \"none\" or \"tanh\", got \"" + mode + "\"");
  }
  return std::make_unique<UnaryKernel>(mode == "tanh" ? f.alt : f.fn, UnaryParams{}, kTranscendentalGrain, false);
}

// The three variants of one op, best first.
struct UnaryVariants {
  IsaFns avx512, avx2, scalar;
};

void AddUnary(KernelRegistry& r, const std::string& op, const std::string& lower, int since, int until,
              const UnaryVariants& v, Maker make, const std::string& domain = "") {
  auto def = [&](const std::string& impl, IsaSet isa, IsaFns fns) {
    r.Add({.op = op,
           .domain = domain,
           .since = since,
           .until = until,
           .types = {{"T", {DataType::kFloat}}},
           .create = [make, fns](const ir::Node& node, const KernelOptions&) { return make(node, fns); },
           .isa = isa,
           .name = "cpu.f32_" + lower + "__" + impl + "." + std::to_string(since)});
  };
  def("avx512", {Isa::kAvx512f}, v.avx512);
  def("avx2", {Isa::kAvx2, Isa::kFma}, v.avx2);
  def("scalar", {}, v.scalar);
}

template <class Avx512Op, class Avx2Op, class ScalarOp>
UnaryVariants Variants() {
  return {{&avx512::Unary<Avx512Op>}, {&avx2::Unary<Avx2Op>}, {&scalar::Unary<ScalarOp>}};
}

}  // namespace

void RegisterUnaryElementwiseKernels(KernelRegistry& r) {
  AddUnary(r, "Relu", "relu", 6, kOpsetOpen, Variants<avx512::ReluOp, avx2::ReluOp, scalar::ReluOp>(), MakeCheap);
  AddUnary(r, "LeakyRelu", "leaky_relu", 6, kOpsetOpen,
           Variants<avx512::LeakyReluOp, avx2::LeakyReluOp, scalar::LeakyReluOp>(), MakeLeakyRelu);
  AddUnary(r, "Clip", "clip", 6, 10, Variants<avx512::ClipOp, avx2::ClipOp, scalar::ClipOp>(), MakeClipAttributes);
  AddUnary(r, "Clip", "clip", 11, kOpsetOpen, Variants<avx512::ClipOp, avx2::ClipOp, scalar::ClipOp>(), MakeClipInputs);
  AddUnary(r, "Neg", "neg", 6, kOpsetOpen, Variants<avx512::NegOp, avx2::NegOp, scalar::NegOp>(), MakeCheap);
  AddUnary(r, "Abs", "abs", 6, kOpsetOpen, Variants<avx512::AbsOp, avx2::AbsOp, scalar::AbsOp>(), MakeCheap);
  AddUnary(r, "Sqrt", "sqrt", 6, kOpsetOpen, Variants<avx512::SqrtOp, avx2::SqrtOp, scalar::SqrtOp>(), MakeCheap);
  AddUnary(r, "Exp", "exp", 6, kOpsetOpen, Variants<avx512::ExpOp, avx2::ExpOp, scalar::ExpOp>(), MakeTranscendental);
  AddUnary(r, "Sigmoid", "sigmoid", 6, kOpsetOpen, Variants<avx512::SigmoidOp, avx2::SigmoidOp, scalar::SigmoidOp>(),
           MakeTranscendental);
  AddUnary(r, "Tanh", "tanh", 6, kOpsetOpen, Variants<avx512::TanhOp, avx2::TanhOp, scalar::TanhOp>(),
           MakeTranscendental);
  AddUnary(r, "Erf", "erf", 9, kOpsetOpen, Variants<avx512::ErfOp, avx2::ErfOp, scalar::ErfOp>(), MakeTranscendental);
  UnaryVariants gelu = Variants<avx512::GeluErfOp, avx2::GeluErfOp, scalar::GeluErfOp>();
  gelu.avx512.alt = &avx512::Unary<avx512::GeluTanhOp>;
  gelu.avx2.alt = &avx2::Unary<avx2::GeluTanhOp>;
  gelu.scalar.alt = &scalar::Unary<scalar::GeluTanhOp>;
  AddUnary(r, "Gelu", "gelu", 20, kOpsetOpen, gelu, MakeGelu);
  AddUnary(r, "Gelu", "ferry_gelu", 1, kOpsetOpen, gelu, MakeGelu, "ai.ferry");  // what fuse_gelu produces
}

}  // namespace ferry::cpu
