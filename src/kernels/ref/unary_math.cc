// Unary math: Abs Neg Exp Log Sqrt Reciprocal Floor Ceil Round Sign Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh
// Acosh Atanh Erf Sigmoid Tanh, and the logical/bitwise/classification ops Not BitwiseNot IsNaN IsInf. The output
// has the input's shape (Prepare: UnaryKernel's, and IsNaNOrInf's).
#include <cmath>
#include <type_traits>

#include "core/float8.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using SignedNumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;

// A float function applied through the accumulation type.
#define FERRY_FLOAT_UNARY(NAME, EXPR)                          \
  struct NAME {                                                \
    explicit NAME(const ir::Node&) {}                          \
    template <typename T>                                      \
    T operator()(T v) const {                                  \
      return ViaAcc(v, [](auto x) -> decltype(x) { return EXPR; }); \
    }                                                          \
  };

FERRY_FLOAT_UNARY(ExpOp, std::exp(x))
FERRY_FLOAT_UNARY(LogOp, std::log(x))
FERRY_FLOAT_UNARY(SqrtOp, std::sqrt(x))
FERRY_FLOAT_UNARY(ReciprocalOp, decltype(x)(1) / x)
FERRY_FLOAT_UNARY(FloorOp, std::floor(x))
FERRY_FLOAT_UNARY(CeilOp, std::ceil(x))
FERRY_FLOAT_UNARY(RoundOp, std::nearbyint(x))  // default rounding mode: half to even
FERRY_FLOAT_UNARY(SinOp, std::sin(x))
FERRY_FLOAT_UNARY(CosOp, std::cos(x))
FERRY_FLOAT_UNARY(TanOp, std::tan(x))
FERRY_FLOAT_UNARY(AsinOp, std::asin(x))
FERRY_FLOAT_UNARY(AcosOp, std::acos(x))
FERRY_FLOAT_UNARY(AtanOp, std::atan(x))
FERRY_FLOAT_UNARY(SinhOp, std::sinh(x))
FERRY_FLOAT_UNARY(CoshOp, std::cosh(x))
FERRY_FLOAT_UNARY(AsinhOp, std::asinh(x))
FERRY_FLOAT_UNARY(AcoshOp, std::acosh(x))
FERRY_FLOAT_UNARY(AtanhOp, std::atanh(x))
FERRY_FLOAT_UNARY(TanhOp, std::tanh(x))
FERRY_FLOAT_UNARY(SigmoidOp, x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)))
#undef FERRY_FLOAT_UNARY

struct AbsOp {
  explicit AbsOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) {
      return v;
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps INT_MIN like numpy instead of overflowing
      return v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v;
    } else {
      return ViaAcc(v, [](auto x) { return std::fabs(x); });
    }
  }
};

struct NegOp {
  explicit NegOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U(0) - static_cast<U>(v));
    } else {
      return ViaAcc(v, [](auto x) { return -x; });
    }
  }
};

struct SignOp {
  explicit SignOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(v > T(0) ? 1 : (v < T(0) ? -1 : 0));
    } else {
      return ViaAcc(v, [](auto x) -> decltype(x) { return x > 0 ? 1 : (x < 0 ? -1 : x); });  // keeps NaN, +-0
    }
  }
};

struct ErfOp {
  explicit ErfOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(std::erf(static_cast<double>(v)));  // -1, 0 or 1
    } else {
      return ViaAcc(v, [](auto x) { return std::erf(x); });
    }
  }
};

struct NotOp {
  explicit NotOp(const ir::Node&) {}
  bool operator()(bool v) const { return !v; }
};

struct BitwiseNotOp {
  explicit BitwiseNotOp(const ir::Node&) {}
  template <typename T>
  T operator()(T v) const {
    return static_cast<T>(~v);
  }
};

// IsNaN / IsInf: float types (incl. float8) -> bool.
class IsNaNOrInf : public OpKernel {
 public:
  explicit IsNaNOrInf(const ir::Node& node)
      : is_inf_(node.op_type() == "IsInf"),
        detect_negative_(node.GetInt("detect_negative", 1) != 0),
        detect_positive_(node.GetInt("detect_positive", 1) != 0) {}

  void Prepare(PrepareContext& ctx) const override {
    ctx.SetOutput(0, DataType::kBool, ctx.tensor_input(0).shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    bool* out = y.data<bool>();
    auto test = [this](double v) {
      if (!is_inf_) return std::isnan(v);
      return std::isinf(v) && (v > 0 ? detect_positive_ : detect_negative_);
    };
    if (IsSmallFloat(x.dtype())) {
      if (x.dtype() == DataType::kFloat4E2M1) {
        for (int64_t i = 0; i < x.size(); ++i) out[i] = test(Float4E2M1ToFloat(ReadSubByte(x.raw_data(), 4, i)));
      } else {
        const auto* in = x.data<uint8_t>();
        DataType t = x.dtype();
        UnaryMap(ctx.threads(), in, out, x.size(), [&](uint8_t c) { return test(SmallFloatToFloat(t, c)); });
      }
      return;
    }
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      UnaryMap(ctx.threads(), x.data<T>(), out, x.size(),
               [&](T v) { return test(static_cast<double>(static_cast<Acc<T>>(v))); });
    });
  }

 private:
  bool is_inf_, detect_negative_, detect_positive_;
};

std::vector<DataType> Float8Types() {
  return {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ};
}

template <typename K>
void AddUnary(KernelRegistry& r, const char* op, int since, std::vector<DataType> types) {
  r.Add({.op = op, .since = since, .types = {{"T", std::move(types)}}, .create = MakeKernel<K>});
}

}  // namespace

void RegisterUnaryMathKernels(KernelRegistry& r) {
  const auto floats = dtypes::Floats();
  // Schemas: version 1 (consumed_inputs, ignored), 6, 13 (bfloat16); trig ops 7 and hyperbolic ops 9, with
  // bfloat16 from 22. One kernel serves every version; its dtype set is the union.
  AddUnary<UnaryKernel<ExpOp, FloatTypes>>(r, "Exp", 1, floats);
  AddUnary<UnaryKernel<LogOp, FloatTypes>>(r, "Log", 1, floats);
  AddUnary<UnaryKernel<SqrtOp, FloatTypes>>(r, "Sqrt", 1, floats);
  AddUnary<UnaryKernel<ReciprocalOp, FloatTypes>>(r, "Reciprocal", 1, floats);
  AddUnary<UnaryKernel<FloorOp, FloatTypes>>(r, "Floor", 1, floats);
  AddUnary<UnaryKernel<CeilOp, FloatTypes>>(r, "Ceil", 1, floats);
  AddUnary<UnaryKernel<RoundOp, FloatTypes>>(r, "Round", 11, floats);
  AddUnary<UnaryKernel<SigmoidOp, FloatTypes>>(r, "Sigmoid", 1, floats);
  AddUnary<UnaryKernel<TanhOp, FloatTypes>>(r, "Tanh", 1, floats);
  AddUnary<UnaryKernel<SinOp, FloatTypes>>(r, "Sin", 7, floats);
  AddUnary<UnaryKernel<CosOp, FloatTypes>>(r, "Cos", 7, floats);
  AddUnary<UnaryKernel<TanOp, FloatTypes>>(r, "Tan", 7, floats);
  AddUnary<UnaryKernel<AsinOp, FloatTypes>>(r, "Asin", 7, floats);
  AddUnary<UnaryKernel<AcosOp, FloatTypes>>(r, "Acos", 7, floats);
  AddUnary<UnaryKernel<AtanOp, FloatTypes>>(r, "Atan", 7, floats);
  AddUnary<UnaryKernel<SinhOp, FloatTypes>>(r, "Sinh", 9, floats);
  AddUnary<UnaryKernel<CoshOp, FloatTypes>>(r, "Cosh", 9, floats);
  AddUnary<UnaryKernel<AsinhOp, FloatTypes>>(r, "Asinh", 9, floats);
  AddUnary<UnaryKernel<AcoshOp, FloatTypes>>(r, "Acosh", 9, floats);
  AddUnary<UnaryKernel<AtanhOp, FloatTypes>>(r, "Atanh", 9, floats);
  // Abs 1/6/13, Sign 9/13, Erf 9/13: every numeric type from 6/9 on.
  AddUnary<UnaryKernel<AbsOp, NumericTypes>>(r, "Abs", 1, dtypes::Numeric());
  AddUnary<UnaryKernel<SignOp, NumericTypes>>(r, "Sign", 9, dtypes::Numeric());
  AddUnary<UnaryKernel<ErfOp, NumericTypes>>(r, "Erf", 9, dtypes::Numeric());
  // Neg 1/6/13: floats and signed integers.
  AddUnary<UnaryKernel<NegOp, SignedNumericTypes>>(r, "Neg", 1, dtypes::Concat(floats, dtypes::SignedInts()));
  AddUnary<UnaryKernel<NotOp, TypeList<bool>>>(r, "Not", 1, {DataType::kBool});
  AddUnary<UnaryKernel<BitwiseNotOp, IntTypes>>(r, "BitwiseNot", 18, dtypes::Ints());
  // IsNaN 9/13/20, IsInf 10/20 (float16, bfloat16 and float8 from 20).
  const auto nan_types = dtypes::Concat(floats, Float8Types());
  r.Add({.op = "IsNaN",
         .since = 9,
         .types = {{"T1", nan_types}, {"T2", {DataType::kBool}}},
         .create = MakeKernel<IsNaNOrInf>});
  r.Add({.op = "IsInf",
         .since = 10,
         .types = {{"T1", nan_types}, {"T2", {DataType::kBool}}},
         .create = MakeKernel<IsNaNOrInf>});
}

}  // namespace ferry::ref
