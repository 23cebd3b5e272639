// BitShift (opset 11): z = x << y or x >> y on unsigned integers with numpy broadcasting; shifting by the bit
// width or more gives 0.
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct BitShiftOp {
  bool left;
  explicit BitShiftOp(const ir::Node& n) {
    std::string d = n.RequireAttr("direction").s;
    if (d != "LEFT" && d != "RIGHT") {
      throw InvalidModelError(n.Describe() + ": BitShift direction must be \"LEFT\" or \"RIGHT\", got \"" + d + "\"");
    }
    left = d == "LEFT";
  }
  template <typename T>
  T operator()(T a, T b) const {
    return left ? BitShiftValue<true>(a, b) : BitShiftValue<false>(a, b);
  }
};

using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

}  // namespace

void RegisterBitShiftKernels(KernelRegistry& r) {
  r.Add({.op = "BitShift",
         .since = 11,
         .types = {{"T", {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64}}},
         .create = MakeKernel<BinaryKernel<BitShiftOp, UnsignedTypes>>});
}

}  // namespace ferry::ref
