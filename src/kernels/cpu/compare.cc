// Equal Less Greater LessOrEqual GreaterOrEqual (opset 7+: numpy broadcasting; LessOrEqual/GreaterOrEqual from 12)
// on the cpu backend for float32, float64, int8..int64 and uint8..uint64 (Equal also bool, and string from opset
// 19), producing bool with ref's semantics: the C++ comparison of the two values (ordered: false when either float
// is NaN, except != which Equal never uses). Opsets 1-6 (the legacy broadcast/axis attributes), float16 and
// bfloat16 are left to ref. Prepare checks the types
// and resolves the broadcast once per signature (binary_elementwise_map.h); Compute walks that plan with row loops
// the compiler vectorizes, compiled for AVX-512F, AVX2+FMA and the baseline (registered best first; strings have
// the baseline loop only).
#include <cstdint>
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
  static bool Apply(const T& a, const T& b) {  // by reference: T may be std::string
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
    def("f64", DataType::kDouble, Factory<double, Op>(DataType::kDouble, isa));
    def("i8", DataType::kInt8, Factory<int8_t, Op>(DataType::kInt8, isa));
    def("i16", DataType::kInt16, Factory<int16_t, Op>(DataType::kInt16, isa));
    def("i32", DataType::kInt32, Factory<int32_t, Op>(DataType::kInt32, isa));
    def("i64", DataType::kInt64, Factory<int64_t, Op>(DataType::kInt64, isa));
    def("u8", DataType::kUint8, Factory<uint8_t, Op>(DataType::kUint8, isa));
    def("u16", DataType::kUint16, Factory<uint16_t, Op>(DataType::kUint16, isa));
    def("u32", DataType::kUint32, Factory<uint32_t, Op>(DataType::kUint32, isa));
    def("u64", DataType::kUint64, Factory<uint64_t, Op>(DataType::kUint64, isa));
    if (with_bool) def("bool", DataType::kBool, Factory<bool, Op>(DataType::kBool, isa));
  }
}

// Equal on strings (opset 19): the baseline loop only (std::string's compare has no vector form to gain).
void AddStringEqual(KernelRegistry& r) {
  r.Add({.op = "Equal",
         .since = 19,
         .types = {{"T", {DataType::kString}}, {"T1", {DataType::kBool}}},
         .create = [](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<CompareKernel<std::string>>(
               DataType::kString, MapRows<std::string, std::string, bool, EqualOp>(MapIsa::kScalar));
         },
         .name = "cpu.string_equal__scalar.19"});
}

}  // namespace

void RegisterCompareKernels(KernelRegistry& r) {
  // Equal 7 (bool/int32/int64), 11 (numeric), 13, 19 (string); Less/Greater 7 (floats), 9 (integers), 13;
  // LessOrEqual/GreaterOrEqual 12, 16. One kernel per type serves every version from its first.
  AddCompare<EqualOp>(r, "Equal", "equal", 7, true);
  AddStringEqual(r);
  AddCompare<LessOp>(r, "Less", "less", 7, false);
  AddCompare<GreaterOp>(r, "Greater", "greater", 7, false);
  AddCompare<LessOrEqualOp>(r, "LessOrEqual", "less_or_equal", 12, false);
  AddCompare<GreaterOrEqualOp>(r, "GreaterOrEqual", "greater_or_equal", 12, false);
}

}  // namespace ferry::cpu
