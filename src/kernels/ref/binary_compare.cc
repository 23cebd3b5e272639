// Comparisons with a bool output and numpy broadcasting (legacy `broadcast`/`axis` below opset 7): Equal Less
// Greater LessOrEqual GreaterOrEqual. Equal also takes bool (all versions) and string (opset 19+).
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Compares numbers in their accumulation type (float16/bfloat16 as float), anything else as is.
template <typename T>
decltype(auto) Cmp(const T& v) {
  if constexpr (kIsHalf<T>) {
    return static_cast<float>(v);
  } else {
    return (v);
  }
}

#define FERRY_COMPARE_OP(NAME, OPERATOR)          \
  struct NAME {                                   \
    explicit NAME(const ir::Node&) {}             \
    template <typename T>                         \
    bool operator()(const T& a, const T& b) const { \
      return Cmp(a) OPERATOR Cmp(b);              \
    }                                             \
  };

FERRY_COMPARE_OP(EqualOp, ==)
FERRY_COMPARE_OP(LessOp, <)
FERRY_COMPARE_OP(GreaterOp, >)
FERRY_COMPARE_OP(LessOrEqualOp, <=)
FERRY_COMPARE_OP(GreaterOrEqualOp, >=)
#undef FERRY_COMPARE_OP

template <typename Op, typename Types>
void AddCompare(KernelRegistry& r, const char* op, int since, std::vector<DataType> types) {
  r.Add({.op = op,
         .since = since,
         .types = {{"T", std::move(types)}, {"T1", {DataType::kBool}}},
         .create = MakeKernel<BinaryKernel<Op, Types, /*kBoolOut=*/true>>});
}

}  // namespace

void RegisterBinaryCompareKernels(KernelRegistry& r) {
  // Equal 1 (bool/int32/int64, legacy broadcast), 7, 11 (numeric), 13 (bfloat16), 19 (string).
  AddCompare<EqualOp, AllTypes>(r, "Equal", 1,
                                dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString}));
  // Less/Greater 1 (floats, legacy broadcast), 7, 9 (integers), 13 (bfloat16); *OrEqual 12, 16 (bfloat16).
  AddCompare<LessOp, NumericTypes>(r, "Less", 1, dtypes::Numeric());
  AddCompare<GreaterOp, NumericTypes>(r, "Greater", 1, dtypes::Numeric());
  AddCompare<LessOrEqualOp, NumericTypes>(r, "LessOrEqual", 12, dtypes::Numeric());
  AddCompare<GreaterOrEqualOp, NumericTypes>(r, "GreaterOrEqual", 12, dtypes::Numeric());
}

}  // namespace ferry::ref
