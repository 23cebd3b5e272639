#include "kernels/ref/common.h"

#include "semantics/broadcast.h"

namespace ferry::ref {

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1)) {
    throw InvalidArgumentError(what + ": axis " + std::to_string(axis) + " is out of range for rank " +
                               std::to_string(rank));
  }
  return a;
}

std::vector<int64_t> Strides(std::span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Shape BroadcastShapes(const std::vector<Shape>& shapes, const std::string& what) {
  if (std::optional<Shape> out = semantics::BroadcastShapes(shapes)) return std::move(*out);
  std::string list;
  for (const auto& t : shapes) list += (list.empty() ? "" : " and ") + ShapeToString(t);
  throw InvalidArgumentError(what + ": shapes " + list + " cannot be broadcast together");
}

BroadcastIterator::BroadcastIterator(const Shape& out_shape, const std::vector<Shape>& in_shapes) : out_(out_shape) {
  size_ = ShapeElementCount(out_);
  const size_t rank = out_.size();
  for (const auto& s : in_shapes) {
    std::vector<int64_t> st(rank, 0);
    auto own = Strides(s);
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) st[off + i] = s[i] == 1 ? 0 : own[i];
    in_strides_.push_back(std::move(st));
  }
}

std::vector<int64_t> ReadInt64s(const Tensor& t, const std::string& what) {
  std::vector<int64_t> out(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kInt64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + t.size(), out.begin());
  } else if (t.dtype() == DataType::kInt32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + t.size(), out.begin());
  } else {
    throw InvalidArgumentError(what + ": expected an int32 or int64 tensor, got " +
                               std::string(DataTypeName(t.dtype())));
  }
  return out;
}

}  // namespace ferry::ref
