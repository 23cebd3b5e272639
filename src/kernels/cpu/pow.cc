// Pow (opsets 7, 12, 13, 15) on the cpu backend for a float32 base and a float32, int32 or int64 exponent, with
// numpy broadcasting and ref's semantics: z = float(pow(double(x), double(y))). A single-element exponent of 2, 3,
// 1 or 0.5 takes a fast path with the same result: x * x in float (the double product of two floats is exact, so
// rounding it once to float is what ref gets), (x * x) * x in double, x itself, and a correctly rounded float
// square root with pow's +0 for -0 and +inf for -inf (the root is what pow(x, 0.5) rounds to). Other exponents
// call pow per element, as ref. Integer bases and opset 1-6 (the legacy broadcast/axis attributes) are left to
// ref. Prepare checks the types and resolves the broadcast once per signature (binary_elementwise_map.h); the fast
// path is chosen per run from the exponent's one value. The row loops come in AVX-512F, AVX2+FMA and baseline
// variants, registered best first.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The general case, exactly as ref.
struct PowOp {
  template <class E>
  static float Apply(float x, E y) {
    return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(y)));
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

template <class E>
class PowKernel final : public OpKernel {
 public:
  PowKernel(DataType exp_dtype, MapIsa isa) : exp_dtype_(exp_dtype), isa_(isa) {}

  // A float32 base and an exponent of the kernel's type, shapes that broadcast (InvalidArgumentError naming the
  // node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& y = ctx.tensor_input(1);
    if (x.dtype != DataType::kFloat || y.dtype != exp_dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and exponent " + ctx.InputString(1) +
                                 ": expected float32 and " + std::string(DataTypeName(exp_dtype_)));
    }
    BinaryMapPlan p(x.shape, y.shape, ref::BroadcastShapes({x.shape, y.shape}, ctx.Describe()));
    ctx.SetOutput(0, DataType::kFloat, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    const E* py = y.data<E>();
    BinaryMapRows<float, E, float> rows = MapRows<float, E, float, PowOp>(isa_);
    if (p.path == BinaryMapPath::kVS) {
      const double e = static_cast<double>(py[0]);
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
    RunBinaryMap(ctx.threads(), p, x.data<float>(), py, out.data<float>(), rows);
  }

 private:
  DataType exp_dtype_;
  MapIsa isa_;
};

}  // namespace

void RegisterPowKernels(KernelRegistry& r) {
  // Versions 7 (numpy broadcasting), 12 (exponent type T1 apart from the base's), 13 and 15 (bfloat16: left to
  // ref). Before 12 the schema binds both inputs to T, so only the float32 exponent applies there.
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& tag, DataType dtype, KernelFactory create) {
      r.Add({.op = "Pow",
             .since = 7,
             .types = {{"T", {DataType::kFloat}}, {"T1", {dtype}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = "cpu.f32_pow_" + tag + "__" + MapIsaName(isa) + ".7"});
    };
    def("f32", DataType::kFloat, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PowKernel<float>>(DataType::kFloat, isa);
    });
    def("i32", DataType::kInt32, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PowKernel<int32_t>>(DataType::kInt32, isa);
    });
    def("i64", DataType::kInt64, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PowKernel<int64_t>>(DataType::kInt64, isa);
    });
  }
}

}  // namespace ferry::cpu
