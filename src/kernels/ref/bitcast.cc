// BitCast (opset 26): reinterprets the bits of each element as another type of the same bit width (little
// endian, same shape). Any type but string.
#include <cstring>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class BitCast : public OpKernel {
 public:
  explicit BitCast(const ir::Node& node) : to_(static_cast<DataType>(node.RequireAttr("to").i)) {
    if (!IsKnownDataType(static_cast<int32_t>(to_)) || to_ == DataType::kString) {
      throw InvalidModelError(node.Describe() + ": attribute 'to' = " + std::to_string(static_cast<int>(to_)) +
                              " is not a non-string data type");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype == DataType::kString) {
      throw InvalidArgumentError(ctx.Describe() + ": cannot bitcast a string tensor (" + ctx.InputString(0) + ")");
    }
    if (DataTypeBits(x.dtype) != DataTypeBits(to_)) {
      throw InvalidArgumentError(ctx.Describe() + ": cannot bitcast " + std::string(DataTypeName(x.dtype)) + " (" +
                                 std::to_string(DataTypeBits(x.dtype)) + " bits) to " +
                                 std::string(DataTypeName(to_)) + " (" + std::to_string(DataTypeBits(to_)) + " bits)");
    }
    ctx.SetOutput(0, to_, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (x.nbytes()) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
    if (to_ == DataType::kBool) {  // keep bools canonical (0/1) so later ops can trust them
      bool* p = y.data<bool>();
      const auto* b = static_cast<const uint8_t*>(x.raw_data());
      for (int64_t i = 0; i < y.size(); ++i) p[i] = b[i] != 0;
    }
  }

 private:
  DataType to_;
};

}  // namespace

void RegisterBitCastKernels(KernelRegistry& r) {
  r.Add({.op = "BitCast",
         .since = 26,
         .types = {{"T1", dtypes::AllNonString()}, {"T2", dtypes::AllNonString()}},
         .create = MakeKernel<BitCast>});
}

}  // namespace ferry::ref
