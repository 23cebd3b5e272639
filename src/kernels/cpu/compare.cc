// Equal Less Greater LessOrEqual GreaterOrEqual (opset 7+: numpy broadcasting; LessOrEqual/GreaterOrEqual from 12)
// on the cpu backend for float32, int32 and int64 (Equal also bool), producing bool with ref's semantics: the
// C++ comparison of the two values (ordered: false when either float is NaN, except != which Equal never uses).
// Opsets 1-6 (the legacy broadcast/axis attributes) and the other types are left to ref. Prepare checks the types
// and resolves the broadcast once per signature (binary_elementwise_map.h); Compute walks that plan with row loops
// the compiler vectorizes, compiled for AVX-512F, AVX2+FMA and the baseline (registered best first).
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct EqualOp {
  template <class T>
  static bool Apply(T a, T b) {
    return a == b;
  }
};
struct LessOp {
  template <class T>
  static bool Apply(T a, T b) {
    return a < b;
  }
};
struct GreaterOp {
  template <class T>
  static bool Apply(T a, T b) {
    return a > b;
  }
};
struct LessOrEqualOp {
  template <class T>
  static bool Apply(T a, T b) {
    return a <= b;
  }
};
struct GreaterOrEqualOp {
  template <class T>
  static bool Apply(T a, T b) {
    return a >= b;
  }
};

template <class T>
class CompareKernel final : public OpKernel {
 public:
  CompareKernel(DataType dtype, BinaryMapRows<T, T, bool> rows) : dtype_(dtype), rows_(rows) {}

  // Both inputs of the kernel's type, shapes that broadcast (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != dtype_ || b.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryMapPlan p(a.shape, b.shape, ref::BroadcastShapes({a.shape, b.shape}, ctx.Describe()));
    ctx.SetOutput(0, DataType::kBool, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, a.data<T>(), b.data<T>(), out.data<bool>(), rows_);
  }

 private:
  DataType dtype_;
  BinaryMapRows<T, T, bool> rows_;
};

template <class T, class Op>
KernelFactory Factory(DataType dtype, MapIsa isa) {
  return [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    return std::make_unique<CompareKernel<T>>(dtype, MapRows<T, T, bool, Op>(isa));
  };
}

template <class Op>
void AddCompare(KernelRegistry& r, const std::string& op, const std::string& lower, int since, bool with_bool) {
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& tag, DataType dtype, KernelFactory create) {
      r.Add({.op = op,
             .since = since,
             .types = {{"T", {dtype}}, {"T1", {DataType::kBool}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = "cpu." + tag + "_" + lower + "__" + MapIsaName(isa) + "." + std::to_string(since)});
    };
    def("f32", DataType::kFloat, Factory<float, Op>(DataType::kFloat, isa));
    def("i32", DataType::kInt32, Factory<int32_t, Op>(DataType::kInt32, isa));
    def("i64", DataType::kInt64, Factory<int64_t, Op>(DataType::kInt64, isa));
    if (with_bool) def("bool", DataType::kBool, Factory<bool, Op>(DataType::kBool, isa));
  }
}

}  // namespace

void RegisterCompareKernels(KernelRegistry& r) {
  // Equal 7 (bool/int32/int64), 11 (floats), 13, 19 (string: left to ref); Less/Greater 7 (floats), 9 (integers),
  // 13; LessOrEqual/GreaterOrEqual 12, 16. One kernel per type serves every version from its first.
  AddCompare<EqualOp>(r, "Equal", "equal", 7, true);
  AddCompare<LessOp>(r, "Less", "less", 7, false);
  AddCompare<GreaterOp>(r, "Greater", "greater", 7, false);
  AddCompare<LessOrEqualOp>(r, "LessOrEqual", "less_or_equal", 12, false);
  AddCompare<GreaterOrEqualOp>(r, "GreaterOrEqual", "greater_or_equal", 12, false);
}

}  // namespace ferry::cpu
