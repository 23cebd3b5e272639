// Add Sub Mul Div with numpy broadcasting (opset 7+) and the limited `broadcast`/`axis` broadcasting of opset
// 1-6 (v1's consumed_inputs is ignored). Integer arithmetic wraps; integer Div truncates toward zero like C and
// numpy's trunc-divide used by the ONNX tests (x / 0 gives 0, INT_MIN / -1 gives INT_MIN).
#include <limits>
#include <type_traits>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

#define FERRY_ARITH_OP(NAME, OPERATOR)                                                          \
  struct NAME {                                                                                 \
    explicit NAME(const ir::Node&) {}                                                           \
    template <typename T>                                                                       \
    T operator()(T a, T b) const {                                                              \
      if constexpr (std::is_integral_v<T>) {                                                    \
        using W = WrapInt<T>;                                                                   \
        return static_cast<T>(static_cast<W>(static_cast<W>(a) OPERATOR static_cast<W>(b)));    \
      } else {                                                                                  \
        return static_cast<T>(static_cast<Acc<T>>(a) OPERATOR static_cast<Acc<T>>(b));          \
      }                                                                                         \
    }                                                                                           \
  };

FERRY_ARITH_OP(AddOp, +)
FERRY_ARITH_OP(SubOp, -)
FERRY_ARITH_OP(MulOp, *)
#undef FERRY_ARITH_OP

struct DivOp {
  explicit DivOp(const ir::Node&) {}
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return IntDiv(a, b);
    } else {
      return static_cast<T>(static_cast<Acc<T>>(a) / static_cast<Acc<T>>(b));
    }
  }
};

template <typename Op>
void AddArith(KernelRegistry& r, const char* op) {
  // Versions 1 (float types), 6 (int32/int64/uint32/uint64), 7 (numpy broadcasting), 13 (bfloat16),
  // 14 (8- and 16-bit integers). One kernel serves all; it reads the node's opset for legacy broadcasting.
  r.Add({.op = op, .since = 1, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<BinaryKernel<Op, NumericTypes>>});
}

}  // namespace

void RegisterBinaryArithKernels(KernelRegistry& r) {
  AddArith<AddOp>(r, "Add");
  AddArith<SubOp>(r, "Sub");
  AddArith<MulOp>(r, "Mul");
  AddArith<DivOp>(r, "Div");
}

}  // namespace ferry::ref
