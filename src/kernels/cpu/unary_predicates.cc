// Unary predicates on the cpu backend: IsNaN (float32 -> bool), IsInf (float32 -> bool, detect_negative /
// detect_positive) and Not (bool -> bool), with ref's semantics (IsInf with both detections off is all false).
// They test bit patterns (NaN: exponent all ones and a non-zero mantissa; ±inf: exactly 0x7f800000 / 0xff800000),
// in loops compiled once per ISA (AVX-512F, AVX2, baseline) that the compiler vectorizes, registered best first,
// and threaded with ParallelFor. Other input types (float16, float8, ...) are left to ref.
// Opsets: IsNaN 9+, IsInf 10+ (their later versions only add types), Not 1+.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// y[i] = ((bits of x[i]) & mask) == want; y[i] = (bits & 0x7fffffff) > 0x7f800000 (NaN); y[i] = !x[i].
#define FERRY_PREDICATE_LOOPS                                                         \
  inline uint32_t Bits(float v) {                                                     \
    uint32_t b;                                                                       \
    std::memcpy(&b, &v, sizeof b);                                                    \
    return b;                                                                         \
  }                                                                                   \
  void IsNan(const float* x, bool* y, int64_t n, uint32_t, uint32_t) {                \
    for (int64_t i = 0; i < n; ++i) y[i] = (Bits(x[i]) & 0x7fffffffu) > 0x7f800000u;  \
  }                                                                                   \
  void BitsEqual(const float* x, bool* y, int64_t n, uint32_t mask, uint32_t want) {  \
    for (int64_t i = 0; i < n; ++i) y[i] = (Bits(x[i]) & mask) == want;               \
  }                                                                                   \
  /* Bytes, not bools: a compare per byte vectorizes, and any nonzero byte reads true. */ \
  void Not(const bool* x, bool* y, int64_t n) {                                       \
    const auto* xb = reinterpret_cast<const uint8_t*>(x);                             \
    auto* yb = reinterpret_cast<uint8_t*>(y);                                         \
    for (int64_t i = 0; i < n; ++i) yb[i] = xb[i] == 0;                               \
  }

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
FERRY_PREDICATE_LOOPS
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
FERRY_PREDICATE_LOOPS
}  // namespace avx2
#pragma GCC pop_options

namespace scalar {
FERRY_PREDICATE_LOOPS
}  // namespace scalar
#undef FERRY_PREDICATE_LOOPS

using FloatPredicate = void (*)(const float* x, bool* y, int64_t n, uint32_t mask, uint32_t want);
using BoolMap = void (*)(const bool* x, bool* y, int64_t n);

constexpr int64_t kGrain = 1 << 16;  // memory bound: a chunk per thread worth the hand-off

// IsNaN / IsInf on float32: `fn` with (mask, want); IsInf with both detections off writes false everywhere.
class FloatPredicateKernel final : public OpKernel {
 public:
  FloatPredicateKernel(FloatPredicate fn, uint32_t mask, uint32_t want, bool none)
      : fn_(fn), mask_(mask), want_(want), none_(none) {}

  // X must be float32; Y is bool with X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected float32");
    }
    ctx.SetOutput(0, DataType::kBool, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const float* px = x.data<float>();
    bool* py = y.data<bool>();
    ParallelFor(ctx.threads(), x.size(), kGrain, [&](int64_t s, int64_t e) {
      if (none_) {
        std::memset(py + s, 0, static_cast<size_t>(e - s));
      } else {
        fn_(px + s, py + s, e - s, mask_, want_);
      }
    });
  }

 private:
  FloatPredicate fn_;
  uint32_t mask_, want_;
  bool none_;
};

class NotKernel final : public OpKernel {
 public:
  explicit NotKernel(BoolMap fn) : fn_(fn) {}

  // X must be bool; Y has its shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kBool) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected bool");
    }
    ctx.SetOutput(0, DataType::kBool, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const bool* px = x.data<bool>();
    bool* py = y.data<bool>();
    ParallelFor(ctx.threads(), x.size(), kGrain, [&](int64_t s, int64_t e) { fn_(px + s, py + s, e - s); });
  }

 private:
  BoolMap fn_;
};

std::unique_ptr<OpKernel> MakeIsNan(const ir::Node&, FloatPredicate fn, FloatPredicate) {
  return std::make_unique<FloatPredicateKernel>(fn, 0, 0, false);
}

// IsInf: both detections: |bits| == inf; one: the bits of that infinity; none: false.
std::unique_ptr<OpKernel> MakeIsInf(const ir::Node& node, FloatPredicate, FloatPredicate bits_equal) {
  const bool neg = node.GetInt("detect_negative", 1) != 0, pos = node.GetInt("detect_positive", 1) != 0;
  if (neg && pos) return std::make_unique<FloatPredicateKernel>(bits_equal, 0x7fffffffu, 0x7f800000u, false);
  if (pos) return std::make_unique<FloatPredicateKernel>(bits_equal, 0xffffffffu, 0x7f800000u, false);
  if (neg) return std::make_unique<FloatPredicateKernel>(bits_equal, 0xffffffffu, 0xff800000u, false);
  return std::make_unique<FloatPredicateKernel>(bits_equal, 0, 0, true);
}

using Maker = std::unique_ptr<OpKernel> (*)(const ir::Node&, FloatPredicate is_nan, FloatPredicate bits_equal);

void AddFloatPredicate(KernelRegistry& r, const std::string& op, const std::string& lower, int since, Maker make) {
  auto def = [&](const std::string& impl, IsaSet isa, FloatPredicate is_nan, FloatPredicate bits_equal) {
    r.Add({.op = op,
           .since = since,
           .until = kOpsetOpen,
           .types = {{"T1", {DataType::kFloat}}, {"T2", {DataType::kBool}}},
           .create = [make, is_nan, bits_equal](const ir::Node& node, const KernelOptions&) {
             return make(node, is_nan, bits_equal);
           },
           .isa = isa,
           .name = "cpu.f32_" + lower + "__" + impl + "." + std::to_string(since)});
  };
  def("avx512", {Isa::kAvx512f}, &avx512::IsNan, &avx512::BitsEqual);
  def("avx2", {Isa::kAvx2}, &avx2::IsNan, &avx2::BitsEqual);
  def("scalar", {}, &scalar::IsNan, &scalar::BitsEqual);
}

void AddNot(KernelRegistry& r, const std::string& impl, IsaSet isa, BoolMap fn) {
  r.Add({.op = "Not",
         .since = 1,
         .until = kOpsetOpen,
         .types = {{"T", {DataType::kBool}}},
         .create = [fn](const ir::Node&, const KernelOptions&) { return std::make_unique<NotKernel>(fn); },
         .isa = isa,
         .name = "cpu.bool_not__" + impl + ".1"});
}

}  // namespace

void RegisterUnaryPredicateKernels(KernelRegistry& r) {
  AddFloatPredicate(r, "IsNaN", "isnan", 9, MakeIsNan);
  AddFloatPredicate(r, "IsInf", "isinf", 10, MakeIsInf);
  AddNot(r, "avx512", {Isa::kAvx512f}, &avx512::Not);
  AddNot(r, "avx2", {Isa::kAvx2}, &avx2::Not);
  AddNot(r, "scalar", {}, &scalar::Not);
}

}  // namespace ferry::cpu
