// Gemm's operand geometry (Y = alpha op(A) op(B) + beta C): M, K, N from A, B and transA / transB, and how C
// broadcasts to [M, N]. The one definition the ref and cpu Gemm kernels resolve their inputs with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ferry/tensor.h"

namespace ferry::semantics {

// Which axis of A holds M and K, and which of B holds K and N, under transA / transB.
struct GemmAxes {
  size_t a_m, a_k, b_k, b_n;
};
constexpr GemmAxes GemmAxesOf(bool trans_a, bool trans_b) {
  return {trans_a ? 1u : 0u, trans_a ? 0u : 1u, trans_b ? 1u : 0u, trans_b ? 0u : 1u};
}

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
  // C's extents (1 where it broadcasts) and strides into the [M, N] output (0 along a broadcast dim); all 1 / 0
  // without C.
  int64_t c_rows = 1, c_cols = 1, c_row_stride = 0, c_col_stride = 0;
};

// op(A) [M, K] times op(B) [K, N], op = transpose where trans_a / trans_b is set; C (null when absent) must
// broadcast unidirectionally to [M, N] (rank <= 2, each dim 1 or Y's). nullopt when A or B is not 2-D, the K
// differ or C does not broadcast, with the reason in `*error` (when given): "A [..] and B [..] must be 2-D", "inner
// dimensions do not match: op(A) is MxK, op(B) is KxN", "C [..] cannot be broadcast to [M,N]".
std::optional<GemmShape> GemmShapeOf(const Shape& a, const Shape& b, const Shape* c, bool trans_a, bool trans_b,
                                     std::string* error = nullptr);

// GemmShapeOf, throwing InvalidArgumentError "`what`: reason" where it has none.
GemmShape ResolveGemm(const Shape& a, const Shape& b, const Shape* c, bool trans_a, bool trans_b,
                      const std::string& what);

}  // namespace ferry::semantics
