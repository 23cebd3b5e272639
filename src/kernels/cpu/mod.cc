// Mod (opsets 10, 13) on the cpu backend for every numeric type (float32, float64, float16, bfloat16, int8..int64,
// uint8..uint64) with numpy broadcasting and ref's semantics (ref::ModValue): fmod=0 gives the remainder with the
// divisor's sign (Python's %), fmod=1 C's fmod (the dividend's sign). Floats require fmod=1 by the spec; fmod=0 on
// floats is accepted like ref and follows Python's float %. An integer divisor of 0 gives 0, and so does -1 (which
// avoids INT_MIN % -1). float16/bfloat16 compute in float32 (HalfMapRows). Prepare checks the types and resolves
// the broadcast once per signature (binary_elementwise_map.h).
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

template <bool kFmod>
struct ModOp {
  template <class T>
  static T Apply(T a, T b) {
    return ref::ModValue<kFmod>(a, b);
  }
};

// The row loops of one fmod value: float16/bfloat16 through float32 in blocks, the others plain loops.
template <class T, bool kFmod>
BinaryMapRows<T, T, T> Rows() {
  if constexpr (ref::kIsHalf<T>) {
    return HalfMapRows<T, ModOp<kFmod>>();
  } else {
    return MapRows<T, T, T, ModOp<kFmod>>();
  }
}

// The fmod attribute picks the row loops at creation (any non-zero value is 1, as in ref).
template <class T>
KernelFactory Factory(DataType dtype) {
  return [dtype](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    const bool fmod = node.GetInt("fmod", 0) != 0;
    return std::make_unique<BinaryMapKernel<T>>(dtype, dtype, fmod ? Rows<T, true>() : Rows<T, false>());
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
  def("f64", DataType::kDouble, Factory<double>(DataType::kDouble));
  def("f16", DataType::kFloat16, Factory<Float16>(DataType::kFloat16));
  def("bf16", DataType::kBFloat16, Factory<BFloat16>(DataType::kBFloat16));
  def("i8", DataType::kInt8, Factory<int8_t>(DataType::kInt8));
  def("i16", DataType::kInt16, Factory<int16_t>(DataType::kInt16));
  def("i32", DataType::kInt32, Factory<int32_t>(DataType::kInt32));
  def("i64", DataType::kInt64, Factory<int64_t>(DataType::kInt64));
  def("u8", DataType::kUint8, Factory<uint8_t>(DataType::kUint8));
  def("u16", DataType::kUint16, Factory<uint16_t>(DataType::kUint16));
  def("u32", DataType::kUint32, Factory<uint32_t>(DataType::kUint32));
  def("u64", DataType::kUint64, Factory<uint64_t>(DataType::kUint64));
}

}  // namespace ferry::cpu
