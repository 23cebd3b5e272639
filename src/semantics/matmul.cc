#include "semantics/matmul.h"

#include <algorithm>

#include "ferry/error.h"

namespace ferry::semantics {

std::optional<MatMulShape> MatMulShapeOf(const Shape& a, const Shape& b, std::string* error) {
  auto fail = [&](std::string reason) -> std::optional<MatMulShape> {
    if (error) *error = std::move(reason);
    return std::nullopt;
  };
  if (a.empty() || b.empty()) {
    return fail("MatMul inputs must have rank >= 1, got " + ShapeToString(a) + " and " + ShapeToString(b));
  }
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  MatMulShape s;
  s.m = a2[a2.size() - 2];
  s.k = a2[a2.size() - 1];
  s.n = b2[b2.size() - 1];
  if (b2[b2.size() - 2] != s.k) {
    return fail("inner dimensions do not match: A " + ShapeToString(a) + " and B " + ShapeToString(b));
  }
  s.batch_a.assign(a2.begin(), a2.end() - 2);
  s.batch_b.assign(b2.begin(), b2.end() - 2);
  const size_t ra = s.batch_a.size(), rb = s.batch_b.size(), rank = std::max(ra, rb);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - ra ? 1 : s.batch_a[i - (rank - ra)];
    const int64_t db = i < rank - rb ? 1 : s.batch_b[i - (rank - rb)];
    if (da != db && da != 1 && db != 1) {
      return fail("batch dimensions of A " + ShapeToString(a) + " and B " + ShapeToString(b) + " do not broadcast");
    }
    s.batch.push_back(da == 1 ? db : da);
  }
  s.y_shape = s.batch;
  if (a.size() != 1) s.y_shape.push_back(s.m);
  if (b.size() != 1) s.y_shape.push_back(s.n);
  return s;
}

MatMulShape ResolveMatMul(const Shape& a, const Shape& b, const std::string& what) {
  std::string error;
  std::optional<MatMulShape> s = MatMulShapeOf(a, b, &error);
  if (!s) throw InvalidArgumentError(what + ": " + error);
  return std::move(*s);
}

}  // namespace ferry::semantics
