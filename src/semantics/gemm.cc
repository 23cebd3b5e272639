#include "semantics/gemm.h"

#include "ferry/error.h"

namespace ferry::semantics {

std::optional<GemmShape> GemmShapeOf(const Shape& a, const Shape& b, const Shape* c, bool trans_a, bool trans_b,
                                     std::string* error) {
  auto fail = [&](std::string reason) -> std::optional<GemmShape> {
    if (error) *error = std::move(reason);
    return std::nullopt;
  };
  if (a.size() != 2 || b.size() != 2) {
    return fail("A " + ShapeToString(a) + " and B " + ShapeToString(b) + " must be 2-D");
  }
  const GemmAxes ax = GemmAxesOf(trans_a, trans_b);
  GemmShape s;
  s.m = a[ax.a_m];
  s.k = a[ax.a_k];
  const int64_t kb = b[ax.b_k];
  s.n = b[ax.b_n];
  if (s.k != kb) {
    return fail("inner dimensions do not match: op(A) is " + std::to_string(s.m) + "x" + std::to_string(s.k) +
                ", op(B) is " + std::to_string(kb) + "x" + std::to_string(s.n));
  }
  if (c) {
    const Shape& cs = *c;
    s.c_rows = cs.size() == 2 ? cs[0] : 1;
    s.c_cols = cs.empty() ? 1 : cs.back();
    if (cs.size() > 2 || (s.c_rows != 1 && s.c_rows != s.m) || (s.c_cols != 1 && s.c_cols != s.n)) {
      return fail("C " + ShapeToString(cs) + " cannot be broadcast to [" + std::to_string(s.m) + "," +
                  std::to_string(s.n) + "]");
    }
    s.c_col_stride = s.c_cols == 1 ? 0 : 1;
    s.c_row_stride = s.c_rows == 1 ? 0 : s.c_cols;
  }
  return s;
}

GemmShape ResolveGemm(const Shape& a, const Shape& b, const Shape* c, bool trans_a, bool trans_b,
                      const std::string& what) {
  std::string error;
  const std::optional<GemmShape> s = GemmShapeOf(a, b, c, trans_a, trans_b, &error);
  if (!s) throw InvalidArgumentError(what + ": " + error);
  return *s;
}

}  // namespace ferry::semantics
