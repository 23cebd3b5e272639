// Pow (opsets 7, 12, 13, 15) on the cpu backend with numpy broadcasting and ref's semantics (ref::PowValue) for a
// float32 base with a float32, int32, int64, uint32 or uint64 exponent, z = float(pow(double(x), double(y))), and
// (opset 12+) an int32 or int64 base with an int32, int64 or float32 exponent: integer ^ integer exact by repeated
// squaring (wrapping), integer ^ float through double, truncated back. For the float32 base a single-element
// exponent of 2, 3,
// 1 or 0.5 takes a fast path with the same result: x * x in float (the double product of two floats is exact, so
// rounding it once to float is what ref gets), (x * x) * x in double, x itself, and a correctly rounded float
// square root with pow's +0 for -0 and +inf for -inf (the root is what pow(x, 0.5) rounds to). Other exponents
// call pow per element, as ref. Other base types and opset 1-6 (the legacy broadcast/axis attributes) are left to
// ref. Prepare checks the types and resolves the broadcast once per signature (binary_elementwise_map.h); the fast
// path is chosen per run from the exponent's one value. The row loops come in AVX-512F, AVX2+FMA and baseline
// variants, registered best first.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The general case, exactly as ref.
struct PowOp {
  template <class T, class E>
  static T Apply(T x, E y) {
    return ref::PowValue(x, y);
  }
};

// The fast paths: the exponent argument is the scalar the path was chosen for, and is not read.
struct SquareOp {
  template <class E>
  static float Apply(float x, E) {
    return x * x;
  }
};
struct CubeOp {
  template <class E>
  static float Apply(float x, E) {
    const double d = x;
    return static_cast<float>(d * d * d);
  }
};
struct IdentityOp {
  template <class E>
  static float Apply(float x, E) {
    return x;
  }
};
struct SqrtOp {
  template <class E>
  static float Apply(float x, E) {
    // sqrt(-0) = -0 and sqrt(-inf) = NaN where pow gives +0 and +inf; adding +0 turns -0 into +0.
    return x == -std::numeric_limits<float>::infinity() ? std::numeric_limits<float>::infinity()
                                                        : std::sqrt(x) + 0.0f;
  }
};

template <class T, class E>
class PowKernel final : public OpKernel {
 public:
  PowKernel(DataType base_dtype, DataType exp_dtype, MapIsa isa)
      : base_dtype_(base_dtype), exp_dtype_(exp_dtype), isa_(isa) {}

  // A base and an exponent of the kernel's types, shapes that broadcast (InvalidArgumentError naming the node
  // otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& y = ctx.tensor_input(1);
    if (x.dtype != base_dtype_ || y.dtype != exp_dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and exponent " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(base_dtype_)) + " and " +
                                 std::string(DataTypeName(exp_dtype_)));
    }
    BinaryMapPlan p(x.shape, y.shape, ref::BroadcastShapes({x.shape, y.shape}, ctx.Describe()));
    ctx.SetOutput(0, base_dtype_, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    const E* py = y.data<E>();
    BinaryMapRows<T, E, T> rows = MapRows<T, E, T, PowOp>(isa_);
    if constexpr (std::is_same_v<T, float>) {
      if (p.path == BinaryMapPath::kVS) Fast(py[0], rows);
    }
    RunBinaryMap(ctx.threads(), p, x.data<T>(), py, out.data<T>(), rows);
  }

 private:
  // The float32 base's fast paths for the single exponent value `y` (rows unchanged for the others).
  void Fast(E y, BinaryMapRows<float, E, float>& rows) const {
    const double e = static_cast<double>(y);
    if (e == 2) {
      rows = MapRows<float, E, float, SquareOp>(isa_);
    } else if (e == 3) {
      rows = MapRows<float, E, float, CubeOp>(isa_);
    } else if (e == 1) {
      rows = MapRows<float, E, float, IdentityOp>(isa_);
    } else if (e == 0.5) {
      rows = MapRows<float, E, float, SqrtOp>(isa_);
    }
  }

  DataType base_dtype_, exp_dtype_;
  MapIsa isa_;
};

}  // namespace

void RegisterPowKernels(KernelRegistry& r) {
  // Versions 7 (numpy broadcasting), 12 (integer bases; exponent type T1 apart from the base's), 13 and 15
  // (bfloat16: left to ref). Before 12 the schema binds both inputs to T, so only the float32 exponent applies
  // there; the integer bases start at 12.
  for (MapIsa isa : kMapIsas) {
    auto def = [&]<class T, class E>(T, E, int since, const std::string& tag, DataType base, DataType exp) {
      r.Add({.op = "Pow",
             .since = since,
             .types = {{"T", {base}}, {"T1", {exp}}},
             .create = [base, exp, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<PowKernel<T, E>>(base, exp, isa);
             },
             .isa = MapIsaSet(isa),
             .name = "cpu." + tag + "__" + MapIsaName(isa) + "." + std::to_string(since)});
    };
    def(float{}, float{}, 7, "f32_pow_f32", DataType::kFloat, DataType::kFloat);
    def(float{}, int32_t{}, 7, "f32_pow_i32", DataType::kFloat, DataType::kInt32);
    def(float{}, int64_t{}, 7, "f32_pow_i64", DataType::kFloat, DataType::kInt64);
    def(float{}, uint32_t{}, 12, "f32_pow_u32", DataType::kFloat, DataType::kUint32);
    def(float{}, uint64_t{}, 12, "f32_pow_u64", DataType::kFloat, DataType::kUint64);
    def(int32_t{}, int32_t{}, 12, "i32_pow_i32", DataType::kInt32, DataType::kInt32);
    def(int32_t{}, int64_t{}, 12, "i32_pow_i64", DataType::kInt32, DataType::kInt64);
    def(int32_t{}, float{}, 12, "i32_pow_f32", DataType::kInt32, DataType::kFloat);
    def(int64_t{}, int32_t{}, 12, "i64_pow_i32", DataType::kInt64, DataType::kInt32);
    def(int64_t{}, int64_t{}, 12, "i64_pow_i64", DataType::kInt64, DataType::kInt64);
    def(int64_t{}, float{}, 12, "i64_pow_f32", DataType::kInt64, DataType::kFloat);
  }
}

}  // namespace ferry::cpu
