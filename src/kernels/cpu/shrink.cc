// Shrink (opset 9) on the cpu backend for every numeric type but the half ones, with ref's rule: y = x + bias where
// x < -lambd, x - bias where x > lambd, else 0; floats in their own type (ref::ShrinkFloat), integers through
// double and truncated back (ref::ShrinkInt). The loops are plain C++ the compiler vectorizes, compiled for
// AVX-512F, AVX2+FMA and the baseline (binary_elementwise_map.h's unary rows, registered best first). float16 and
// bfloat16 are left to ref.
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

struct ShrinkParams {
  float lambd = 0.5f, bias = 0.0f;
};

struct ShrinkOp {
  template <class T>
  static T Apply(T x, const ShrinkParams& p) {
    if constexpr (std::is_integral_v<T>) {
      return ref::ShrinkInt(x, p.lambd, p.bias);
    } else {
      return ref::ShrinkFloat(x, p.lambd, p.bias);
    }
  }
};

template <class T>
void AddType(KernelRegistry& r, const std::string& tag, DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    r.Add({.op = "Shrink",
           .since = 9,
           .types = {{"T", {dtype}}},
           .create = [dtype, isa](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             const ShrinkParams p{.lambd = node.GetFloat("lambd", 0.5f), .bias = node.GetFloat("bias", 0.0f)};
             return std::make_unique<UnaryMapKernel<T, ShrinkParams>>(
                 dtype, UnaryMapRows<T, ShrinkParams, ShrinkOp>(isa), p);
           },
           .isa = MapIsaSet(isa),
           .name = MapKernelName(tag, "shrink", isa, 9)});
  }
}

}  // namespace

void RegisterShrinkKernels(KernelRegistry& r) {
  AddType<float>(r, "f32", DataType::kFloat);
  AddType<double>(r, "f64", DataType::kDouble);
  AddType<int8_t>(r, "i8", DataType::kInt8);
  AddType<int16_t>(r, "i16", DataType::kInt16);
  AddType<int32_t>(r, "i32", DataType::kInt32);
  AddType<int64_t>(r, "i64", DataType::kInt64);
  AddType<uint8_t>(r, "u8", DataType::kUint8);
  AddType<uint16_t>(r, "u16", DataType::kUint16);
  AddType<uint32_t>(r, "u32", DataType::kUint32);
  AddType<uint64_t>(r, "u64", DataType::kUint64);
}

}  // namespace ferry::cpu
