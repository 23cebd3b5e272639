// Pointwise activations with attributes: LeakyRelu Elu Selu Celu ThresholdedRelu HardSigmoid HardSwish Softplus
// Softsign Mish Swish Shrink. (Relu, Gelu, PRelu and Clip have their own files.)
#include <cmath>
#include <type_traits>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 0.01f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) { return x < 0 ? x * static_cast<decltype(x)>(alpha) : x; });
  }
};

struct EluOp {
  float alpha;
  explicit EluOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) {
      return x < 0 ? static_cast<decltype(x)>(alpha) * std::expm1(x) : x;
    });
  }
};

struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const ir::Node& n)
      : alpha(n.GetFloat("alpha", 1.67326319217681884765625f)), gamma(n.GetFloat("gamma", 1.05070102214813232421875f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) {
      using A = decltype(x);
      return x > 0 ? static_cast<A>(gamma) * x : static_cast<A>(gamma) * (static_cast<A>(alpha) * std::exp(x) - static_cast<A>(alpha));
    });
  }
};

struct CeluOp {
  float alpha;
  explicit CeluOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {
    if (alpha == 0) throw InvalidModelError(n.Describe() + ": Celu alpha must be non-zero");
  }
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) {
      using A = decltype(x);
      const A a = static_cast<A>(alpha);
      return std::max(A(0), x) + std::min(A(0), a * std::expm1(x / a));
    });
  }
};

struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) { return x > static_cast<decltype(x)>(alpha) ? x : 0; });
  }
};

struct HardSigmoidOp {
  float alpha, beta;
  explicit HardSigmoidOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 0.2f)), beta(n.GetFloat("beta", 0.5f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) {
      using A = decltype(x);
      A y = static_cast<A>(alpha) * x + static_cast<A>(beta);
      return std::isnan(y) ? y : std::min(A(1), std::max(A(0), y));
    });
  }
};

struct HardSwishOp {
  explicit HardSwishOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [](auto x) -> decltype(x) {
      using A = decltype(x);
      A y = x / A(6) + A(0.5);
      return x * (std::isnan(y) ? y : std::min(A(1), std::max(A(0), y)));
    });
  }
};

// log(1 + exp(x)) without overflow.
template <typename A>
inline A Softplus(A x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct SoftplusOp {
  explicit SoftplusOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [](auto x) { return Softplus(x); });
  }
};

struct SoftsignOp {
  explicit SoftsignOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [](auto x) -> decltype(x) { return x / (decltype(x)(1) + std::fabs(x)); });
  }
};

struct MishOp {
  explicit MishOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [](auto x) -> decltype(x) { return x * std::tanh(Softplus(x)); });
  }
};

struct SwishOp {
  float alpha;
  explicit SwishOp(const ir::Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) { return SwishValue(x, alpha); });
  }
};

// Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0. Integer types compute in double and convert back.
struct ShrinkOp {
  float lambd, bias;
  explicit ShrinkOp(const ir::Node& n) : lambd(n.GetFloat("lambd", 0.5f)), bias(n.GetFloat("bias", 0.0f)) {}
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return ShrinkInt(v, lambd, bias);
    } else {
      return ViaAcc(v, [&](auto x) { return ShrinkFloat(x, lambd, bias); });
    }
  }
};

template <typename Op, typename Types = FloatTypes>
void Add(KernelRegistry& r, const char* op, int since, std::vector<DataType> types = dtypes::Floats()) {
  r.Add({.op = op, .since = since, .types = {{"T", std::move(types)}}, .create = MakeKernel<UnaryKernel<Op, Types>>});
}

}  // namespace

void RegisterActivationKernels(KernelRegistry& r) {
  // Versions: LeakyRelu 1/6/16; Elu, Selu, HardSigmoid 1/6/22; ThresholdedRelu 10/22; HardSwish 14/22;
  // Softplus, Softsign 1/22; Mish 18/22; Celu 12; Swish 24; Shrink 9. The attributes and formulas are unchanged
  // across versions (v1's consumed_inputs is ignored), so one kernel per op serves all; dtypes are the union.
  Add<LeakyReluOp>(r, "LeakyRelu", 1);
  Add<EluOp>(r, "Elu", 1);
  Add<SeluOp>(r, "Selu", 1);
  Add<CeluOp>(r, "Celu", 12);
  Add<ThresholdedReluOp>(r, "ThresholdedRelu", 10);
  Add<HardSigmoidOp>(r, "HardSigmoid", 1);
  Add<HardSwishOp>(r, "HardSwish", 14);
  Add<SoftplusOp>(r, "Softplus", 1);
  Add<SoftsignOp>(r, "Softsign", 1);
  Add<MishOp>(r, "Mish", 18);
  Add<SwishOp>(r, "Swish", 24);
  Add<ShrinkOp, NumericTypes>(r, "Shrink", 9, dtypes::Numeric());
}

}  // namespace ferry::ref
