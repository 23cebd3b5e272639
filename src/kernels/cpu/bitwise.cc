// BitwiseAnd BitwiseOr BitwiseXor (opset 18, numpy broadcasting) and BitwiseNot (opset 18) on the cpu backend for
// every integer type (int8..int64, uint8..uint64), as ref: the C++ operator on the two values (~x for Not).
// Prepare checks the types and resolves the broadcast once per signature (binary_elementwise_map.h); the loops
// are plain C++ the compiler vectorizes, compiled for AVX-512F, AVX2+FMA and the baseline (registered best first).
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct AndOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct OrOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct XorOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

struct NoParams {};
struct NotOp {
  template <class T>
  static T Apply(T x, const NoParams&) {
    return static_cast<T>(~x);
  }
};

// One kernel per ISA variant, best first, for each integer type.
template <class T>
void AddType(KernelRegistry& r, const std::string& tag, DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& op, const std::string& lower, KernelFactory create) {
      r.Add({.op = op,
             .since = 18,
             .types = {{"T", {dtype}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = MapKernelName(tag, lower, isa, 18)});
    };
    auto binary = [&]<class Op>(Op) {
      return [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
        return std::make_unique<BinaryMapKernel<T>>(dtype, dtype, MapRows<T, T, T, Op>(isa));
      };
    };
    def("BitwiseAnd", "bitwise_and", binary(AndOp{}));
    def("BitwiseOr", "bitwise_or", binary(OrOp{}));
    def("BitwiseXor", "bitwise_xor", binary(XorOp{}));
    def("BitwiseNot", "bitwise_not", [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<UnaryMapKernel<T, NoParams>>(dtype, UnaryMapRows<T, NoParams, NotOp>(isa));
    });
  }
}

}  // namespace

void RegisterBitwiseKernels(KernelRegistry& r) {
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
