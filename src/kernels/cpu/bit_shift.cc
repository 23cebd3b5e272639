// BitShift (opset 11, numpy broadcasting) on the cpu backend for uint8, uint16, uint32 and uint64 with ref's rule
// (ref::BitShiftValue): x << y or x >> y by the direction attribute ("LEFT" or "RIGHT", read at creation; anything
// else is an InvalidModelError naming the node), a shift by the bit width or more giving 0. Prepare checks the types
// and resolves the broadcast once per signature (binary_elementwise_map.h); the loops are plain C++ the compiler
// vectorizes, compiled for AVX-512F, AVX2+FMA and the baseline (registered best first).
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

template <bool kLeft>
struct ShiftOp {
  template <class T>
  static T Apply(T a, T b) {
    return ref::BitShiftValue<kLeft>(a, b);
  }
};

// The direction picks the row loops at creation.
template <class T>
KernelFactory Factory(DataType dtype, MapIsa isa) {
  return [dtype, isa](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    const std::string d = node.RequireAttr("direction").s;
    if (d != "LEFT" && d != "RIGHT") {
      throw InvalidModelError(node.Describe() + ": BitShift direction must be \"LEFT\" or \"RIGHT\", got \"" + d +
                              "\"");
    }
    return std::make_unique<BinaryMapKernel<T>>(
        dtype, dtype, d == "LEFT" ? MapRows<T, T, T, ShiftOp<true>>(isa) : MapRows<T, T, T, ShiftOp<false>>(isa));
  };
}

}  // namespace

void RegisterBitShiftKernels(KernelRegistry& r) {
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& tag, DataType dtype, KernelFactory create) {
      r.Add({.op = "BitShift",
             .since = 11,
             .types = {{"T", {dtype}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = MapKernelName(tag, "bit_shift", isa, 11)});
    };
    def("u8", DataType::kUint8, Factory<uint8_t>(DataType::kUint8, isa));
    def("u16", DataType::kUint16, Factory<uint16_t>(DataType::kUint16, isa));
    def("u32", DataType::kUint32, Factory<uint32_t>(DataType::kUint32, isa));
    def("u64", DataType::kUint64, Factory<uint64_t>(DataType::kUint64, isa));
  }
}

}  // namespace ferry::cpu
