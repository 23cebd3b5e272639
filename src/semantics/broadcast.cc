#include "semantics/broadcast.h"

#include <algorithm>

namespace ferry::semantics {

ir::Dim BroadcastDim(const ir::Dim& a, const ir::Dim& b, bool* conflict) {
  if (a.is_static() && b.is_static()) {
    if (const std::optional<int64_t> d = BroadcastDim(a.value, b.value)) return *d == a.value ? a : b;
    *conflict = true;
    return ir::Dim{};
  }
  const bool a_one = a.is_static() && a.value == 1, b_one = b.is_static() && b.value == 1;
  if (a_one) return b;
  if (b_one) return a;
  // A static dim other than 1 decides: the other side must be 1 or equal to it.
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  if (!a.symbol.empty() && a.symbol == b.symbol) return a;
  return ir::Dim{};
}

std::optional<Shape> BroadcastShapes(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const std::optional<int64_t> d = BroadcastDim(out[off + i], s[i]);
      if (!d) return std::nullopt;
      out[off + i] = *d;
    }
  }
  return out;
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != to[off + i]) return false;
  }
  return true;
}

}  // namespace ferry::semantics
