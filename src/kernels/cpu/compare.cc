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

template <class T, class Op>
KernelFactory Factory(DataType dtype, MapIsa isa) {
  return [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    return std::make_unique<BinaryMapKernel<T, bool>>(dtype, DataType::kBool, MapRows<T, T, bool, Op>(isa));
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
             .name = MapKernelName(tag, lower, isa, since)});
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
           return std::make_unique<BinaryMapKernel<std::string, bool>>(
               DataType::kString, DataType::kBool, MapRows<std::string, std::string, bool, EqualOp>(MapIsa::kScalar));
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
