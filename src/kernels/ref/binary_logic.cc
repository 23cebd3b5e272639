// Logical And Or Xor on bool tensors (legacy `broadcast`/`axis` below opset 7) and BitwiseAnd BitwiseOr
// BitwiseXor on integer tensors (opset 18), all with numpy broadcasting.
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

#define FERRY_LOGIC_OP(NAME, EXPR)                   \
  struct NAME {                                      \
    explicit NAME(const ir::Node&) {}                \
    template <typename T>                            \
    T operator()(T a, T b) const {                   \
      return static_cast<T>(EXPR);                   \
    }                                                \
  };

FERRY_LOGIC_OP(AndOp, a && b)
FERRY_LOGIC_OP(OrOp, a || b)
FERRY_LOGIC_OP(XorOp, a != b)
FERRY_LOGIC_OP(BitwiseAndOp, a & b)
FERRY_LOGIC_OP(BitwiseOrOp, a | b)
FERRY_LOGIC_OP(BitwiseXorOp, a ^ b)
#undef FERRY_LOGIC_OP

template <typename Op>
void AddLogic(KernelRegistry& r, const char* op) {
  // Versions 1 (legacy broadcast) and 7 (numpy broadcasting).
  r.Add({.op = op,
         .since = 1,
         .types = {{"T", {DataType::kBool}}, {"T1", {DataType::kBool}}},
         .create = MakeKernel<BinaryKernel<Op, TypeList<bool>>>});
}

template <typename Op>
void AddBitwise(KernelRegistry& r, const char* op) {
  r.Add({.op = op, .since = 18, .types = {{"T", dtypes::Ints()}}, .create = MakeKernel<BinaryKernel<Op, IntTypes>>});
}

}  // namespace

void RegisterBinaryLogicKernels(KernelRegistry& r) {
  AddLogic<AndOp>(r, "And");
  AddLogic<OrOp>(r, "Or");
  AddLogic<XorOp>(r, "Xor");
  AddBitwise<BitwiseAndOp>(r, "BitwiseAnd");
  AddBitwise<BitwiseOrOp>(r, "BitwiseOr");
  AddBitwise<BitwiseXorOp>(r, "BitwiseXor");
}

}  // namespace ferry::ref
