// Mod (opsets 10, 13) on the cpu backend for float32, int32 and int64 with numpy broadcasting and ref's semantics:
// fmod=0 gives the remainder with the divisor's sign (Python's %), fmod=1 C's fmod (the dividend's sign). Floats
// require fmod=1 by the spec; fmod=0 on floats is accepted like ref and follows Python's float %. An integer
// divisor of 0 gives 0, and so does -1 (which avoids INT_MIN % -1). Prepare checks the types and resolves the
// broadcast once per signature (binary_elementwise_map.h).
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

template <bool kFmod>
struct ModOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0 || b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (!kFmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      T r = std::fmod(a, b);
      if (!kFmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};

template <class T>
class ModKernel final : public OpKernel {
 public:
  ModKernel(DataType dtype, BinaryMapRows<T, T, T> rows) : dtype_(dtype), rows_(rows) {}

  // Both inputs of the kernel's type, shapes that broadcast (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != dtype_ || b.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryMapPlan p(a.shape, b.shape, ref::BroadcastShapes({a.shape, b.shape}, ctx.Describe()));
    ctx.SetOutput(0, dtype_, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, a.data<T>(), b.data<T>(), out.data<T>(), rows_);
  }

 private:
  DataType dtype_;
  BinaryMapRows<T, T, T> rows_;
};

// The fmod attribute picks the row loops at creation (any non-zero value is 1, as in ref).
template <class T>
KernelFactory Factory(DataType dtype) {
  return [dtype](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    const bool fmod = node.GetInt("fmod", 0) != 0;
    return std::make_unique<ModKernel<T>>(dtype, fmod ? MapRows<T, T, T, ModOp<true>>()
                                                      : MapRows<T, T, T, ModOp<false>>());
  };
}

}  // namespace

void RegisterModKernels(KernelRegistry& r) {
  auto def = [&](const std::string& tag, DataType dtype, KernelFactory create) {
    r.Add({.op = "Mod",
           .since = 10,
           .types = {{"T", {dtype}}},
           .create = std::move(create),
           .name = "cpu." + tag + "_mod.10"});
  };
  def("f32", DataType::kFloat, Factory<float>(DataType::kFloat));
  def("i32", DataType::kInt32, Factory<int32_t>(DataType::kInt32));
  def("i64", DataType::kInt64, Factory<int64_t>(DataType::kInt64));
}

}  // namespace ferry::cpu
