// Unary float32 elementwise ops on the cpu backend, each with AVX-512F, AVX2+FMA and scalar variants registered best
// first (the registry takes the first the target supports):
//   Relu LeakyRelu Clip Neg Abs Sqrt Exp Sigmoid Tanh Erf Gelu
//   HardSigmoid HardSwish ThresholdedRelu Softsign Reciprocal Floor Ceil Round Sign Elu Selu Celu Log Softplus Mish
// and, with the scalar (libm) variant only, threaded like the others: Sinh Cosh Asinh Acosh Atanh (Sin Cos Tan Asin
// Acos Atan, vectorized, are unary_trig.cc). The vector variants are simd_kernels.inc; Exp Sigmoid Tanh Erf Gelu
// Log Softplus Mish (and Elu Selu Celu through Exp) there are polynomial approximations whose measured error against
// glibc (what ref calls) is documented at its top (<= 3 ulp, Mish 6; Gelu within 4.8e-7 absolute); the other vector
// ops evaluate ref's expression in the same order and are exact. The scalar variants compute exactly what ref
// does, with the same libm calls.
// NaN, ±inf and ±0 behave as in ref: Relu maps NaN to 0 (ref's `x > 0 ? x : 0`), Clip keeps NaN, Sigmoid(-inf) = 0,
// Tanh(±inf) = ±1, Exp overflows to inf exactly where expf does, ThresholdedRelu and Celu map NaN to 0, Sign keeps
// NaN and ±0, Round is half to even.
//
// Opsets: the versions before 6 (consumed_inputs) are left to ref; Clip 6-10 reads min/max attributes, Clip 11+ the
// optional scalar inputs at run time (their types and shapes checked by Prepare); Gelu is opset 20 (approximate =
// "none" or "tanh"); the others from their schemas' first version without consumed_inputs (HardSwish 14, Celu 12,
// Mish 18, Round 11, ThresholdedRelu 10, Sign 9, hyperbolic 9). Celu rejects alpha = 0 as ref does.
// Clip 12+ also takes the integer types (int8..int64, uint8..uint64): y = min(max(x, min), max) with the bounds'
// type defaults, as ref, in plain loops compiled per ISA (binary_elementwise_map.h's unary rows).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/binary_elementwise_map.h"
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

struct HardSigmoidOp {
  static float Apply(float x, const UnaryParams& p) {
    const float y = p.alpha * x + p.beta;
    return std::isnan(y) ? y : std::min(1.0f, std::max(0.0f, y));
  }
};
struct HardSwishOp {
  static float Apply(float x, const UnaryParams&) {
    const float y = x / 6.0f + 0.5f;
    return x * (std::isnan(y) ? y : std::min(1.0f, std::max(0.0f, y)));
  }
};
struct ThresholdedReluOp {
  static float Apply(float x, const UnaryParams& p) { return x > p.alpha ? x : 0.0f; }
};
struct SoftsignOp {
  static float Apply(float x, const UnaryParams&) { return x / (1.0f + std::fabs(x)); }
};
struct ReciprocalOp {
  static float Apply(float x, const UnaryParams&) { return 1.0f / x; }
};
struct FloorOp {
  static float Apply(float x, const UnaryParams&) { return std::floor(x); }
};
struct CeilOp {
  static float Apply(float x, const UnaryParams&) { return std::ceil(x); }
};
struct RoundOp {
  static float Apply(float x, const UnaryParams&) { return std::nearbyint(x); }
};
struct SignOp {
  static float Apply(float x, const UnaryParams&) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : x); }
};
struct EluOp {
  static float Apply(float x, const UnaryParams& p) { return x < 0 ? p.alpha * std::expm1(x) : x; }
};
struct SeluOp {
  static float Apply(float x, const UnaryParams& p) {
    return x > 0 ? p.gamma * x : p.gamma * (p.alpha * std::exp(x) - p.alpha);
  }
};
struct CeluOp {
  static float Apply(float x, const UnaryParams& p) {
    return std::max(0.0f, x) + std::min(0.0f, p.alpha * std::expm1(x / p.alpha));
  }
};
inline float Softplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
struct SoftplusOp {
  static float Apply(float x, const UnaryParams&) { return Softplus(x); }
};
struct MishOp {
  static float Apply(float x, const UnaryParams&) { return x * std::tanh(Softplus(x)); }
};
// The libm functions ref calls (float overloads: sinf, logf, ...).
#define FERRY_LIBM_OP(NAME, FN)                                                 \
  struct NAME {                                                                 \
    static float Apply(float x, const UnaryParams&) { return std::FN(x); }     \
  };
FERRY_LIBM_OP(LogOp, log)
FERRY_LIBM_OP(SinhOp, sinh)
FERRY_LIBM_OP(CoshOp, cosh)
FERRY_LIBM_OP(AsinhOp, asinh)
FERRY_LIBM_OP(AcoshOp, acosh)
FERRY_LIBM_OP(AtanhOp, atanh)
#undef FERRY_LIBM_OP

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

// ---- Clip on integers (opset 12+) ----------------------------------------------------------------------------

template <class T>
struct IntClipBounds {
  T lo, hi;
};
struct IntClipOp {
  template <class T>
  static T Apply(T x, const IntClipBounds<T>& b) {
    return std::min(std::max(x, b.lo), b.hi);
  }
};

template <class T>
class IntClipKernel final : public OpKernel {
 public:
  IntClipKernel(DataType dtype, MapIsa isa)
      : dtype_(dtype), row_(UnaryMapRows<T, IntClipBounds<T>, IntClipOp>(isa)) {}

  // X of the kernel's type; min and max, when given, scalars (one element) of X's type. Y has X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected " +
                                 std::string(DataTypeName(dtype_)));
    }
    for (int i : {1, 2}) {
      if (!ctx.has_input(i)) continue;
      const InputSpec& t = ctx.tensor_input(i);
      const char* name = i == 1 ? "min" : "max";
      if (t.dtype != dtype_ || ShapeElementCount(t.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' (" + ctx.InputString(i) +
                                   "): expected a " + std::string(DataTypeName(dtype_)) + " scalar");
      }
    }
    ctx.SetOutput(0, dtype_, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* lo = ctx.input(1);
    const Tensor* hi = ctx.input(2);
    const IntClipBounds<T> b{lo ? lo->data<T>()[0] : std::numeric_limits<T>::lowest(),
                             hi ? hi->data<T>()[0] : std::numeric_limits<T>::max()};
    Tensor& y = ctx.OutputUninitialized(0);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    ParallelFor(ctx.threads(), x.size(), kCheapGrain, [&](int64_t s, int64_t e) { row_(px + s, py + s, e - s, b); });
  }

 private:
  DataType dtype_;
  UnaryMapRowFn<T, IntClipBounds<T>> row_;
};

template <class T>
void AddIntClip(KernelRegistry& r, const std::string& tag, DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    r.Add({.op = "Clip",
           .since = 12,
           .types = {{"T", {dtype}}},
           .create = [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<IntClipKernel<T>>(dtype, isa);
           },
           .isa = MapIsaSet(isa),
           .name = "cpu." + tag + "_clip__" + MapIsaName(isa) + ".12"});
  }
}

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
std::unique_ptr<OpKernel> MakeAlpha(const ir::Node& node, IsaFns f, float def, int64_t grain) {
  return std::make_unique<UnaryKernel>(f.fn, UnaryParams{.alpha = node.GetFloat("alpha", def)}, grain, false);
}
std::unique_ptr<OpKernel> MakeElu(const ir::Node& node, IsaFns f) {
  return MakeAlpha(node, f, 1.0f, kTranscendentalGrain);
}
std::unique_ptr<OpKernel> MakeThresholdedRelu(const ir::Node& node, IsaFns f) {
  return MakeAlpha(node, f, 1.0f, kCheapGrain);
}
std::unique_ptr<OpKernel> MakeCelu(const ir::Node& node, IsaFns f) {
  if (node.GetFloat("alpha", 1.0f) == 0) throw InvalidModelError(node.Describe() + ": Celu alpha must be non-zero");
  return MakeAlpha(node, f, 1.0f, kTranscendentalGrain);
}
std::unique_ptr<OpKernel> MakeSelu(const ir::Node& node, IsaFns f) {
  UnaryParams p{.alpha = node.GetFloat("alpha", 1.67326319217681884765625f),
                .gamma = node.GetFloat("gamma", 1.05070102214813232421875f)};
  return std::make_unique<UnaryKernel>(f.fn, p, kTranscendentalGrain, false);
}
std::unique_ptr<OpKernel> MakeHardSigmoid(const ir::Node& node, IsaFns f) {
  UnaryParams p{.alpha = node.GetFloat("alpha", 0.2f), .beta = node.GetFloat("beta", 0.5f)};
  return std::make_unique<UnaryKernel>(f.fn, p, kCheapGrain, false);
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

// An op with the scalar (libm) variant only: vectorizing it within a few ulp of glibc does not pay here.
void AddScalarOnly(KernelRegistry& r, const std::string& op, const std::string& lower, int since, UnaryFn fn) {
  r.Add({.op = op,
         .since = since,
         .until = kOpsetOpen,
         .types = {{"T", {DataType::kFloat}}},
         .create = [fn](const ir::Node& node, const KernelOptions&) { return MakeTranscendental(node, {fn}); },
         .isa = {},
         .name = "cpu.f32_" + lower + "__scalar." + std::to_string(since)});
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
  AddUnary(r, "Gelu", "ms_gelu", 1, kOpsetOpen, gelu, MakeGelu, "com.microsoft");  // ONNX Runtime's (erf) Gelu
  // Versions before 6 (consumed_inputs) are left to ref, as above; the others start where their schemas do.
  AddUnary(r, "HardSigmoid", "hard_sigmoid", 6, kOpsetOpen,
           Variants<avx512::HardSigmoidOp, avx2::HardSigmoidOp, scalar::HardSigmoidOp>(), MakeHardSigmoid);
  AddUnary(r, "HardSwish", "hard_swish", 14, kOpsetOpen,
           Variants<avx512::HardSwishOp, avx2::HardSwishOp, scalar::HardSwishOp>(), MakeCheap);
  AddUnary(r, "ThresholdedRelu", "thresholded_relu", 10, kOpsetOpen,
           Variants<avx512::ThresholdedReluOp, avx2::ThresholdedReluOp, scalar::ThresholdedReluOp>(),
           MakeThresholdedRelu);
  AddUnary(r, "Softsign", "softsign", 1, kOpsetOpen,
           Variants<avx512::SoftsignOp, avx2::SoftsignOp, scalar::SoftsignOp>(), MakeCheap);
  AddUnary(r, "Reciprocal", "reciprocal", 6, kOpsetOpen,
           Variants<avx512::ReciprocalOp, avx2::ReciprocalOp, scalar::ReciprocalOp>(), MakeCheap);
  AddUnary(r, "Floor", "floor", 6, kOpsetOpen, Variants<avx512::FloorOp, avx2::FloorOp, scalar::FloorOp>(), MakeCheap);
  AddUnary(r, "Ceil", "ceil", 6, kOpsetOpen, Variants<avx512::CeilOp, avx2::CeilOp, scalar::CeilOp>(), MakeCheap);
  AddUnary(r, "Round", "round", 11, kOpsetOpen, Variants<avx512::RoundOp, avx2::RoundOp, scalar::RoundOp>(),
           MakeCheap);
  AddUnary(r, "Sign", "sign", 9, kOpsetOpen, Variants<avx512::SignOp, avx2::SignOp, scalar::SignOp>(), MakeCheap);
  AddUnary(r, "Elu", "elu", 6, kOpsetOpen, Variants<avx512::EluOp, avx2::EluOp, scalar::EluOp>(), MakeElu);
  AddUnary(r, "Selu", "selu", 6, kOpsetOpen, Variants<avx512::SeluOp, avx2::SeluOp, scalar::SeluOp>(), MakeSelu);
  AddUnary(r, "Celu", "celu", 12, kOpsetOpen, Variants<avx512::CeluOp, avx2::CeluOp, scalar::CeluOp>(), MakeCelu);
  AddUnary(r, "Softplus", "softplus", 1, kOpsetOpen,
           Variants<avx512::SoftplusOp, avx2::SoftplusOp, scalar::SoftplusOp>(), MakeTranscendental);
  AddUnary(r, "Mish", "mish", 18, kOpsetOpen, Variants<avx512::MishOp, avx2::MishOp, scalar::MishOp>(),
           MakeTranscendental);
  AddUnary(r, "Log", "log", 6, kOpsetOpen, Variants<avx512::LogOp, avx2::LogOp, scalar::LogOp>(),
           MakeTranscendental);
  AddScalarOnly(r, "Sinh", "sinh", 9, &scalar::Unary<scalar::SinhOp>);
  AddScalarOnly(r, "Cosh", "cosh", 9, &scalar::Unary<scalar::CoshOp>);
  AddScalarOnly(r, "Asinh", "asinh", 9, &scalar::Unary<scalar::AsinhOp>);
  AddScalarOnly(r, "Acosh", "acosh", 9, &scalar::Unary<scalar::AcoshOp>);
  AddScalarOnly(r, "Atanh", "atanh", 9, &scalar::Unary<scalar::AtanhOp>);
  AddIntClip<int8_t>(r, "i8", DataType::kInt8);
  AddIntClip<int16_t>(r, "i16", DataType::kInt16);
  AddIntClip<int32_t>(r, "i32", DataType::kInt32);
  AddIntClip<int64_t>(r, "i64", DataType::kInt64);
  AddIntClip<uint8_t>(r, "u8", DataType::kUint8);
  AddIntClip<uint16_t>(r, "u16", DataType::kUint16);
  AddIntClip<uint32_t>(r, "u32", DataType::kUint32);
  AddIntClip<uint64_t>(r, "u64", DataType::kUint64);
}

}  // namespace ferry::cpu
