#include "kernels/ref/control_flow_util.h"

#include <algorithm>
#include <cstring>

#include "ferry/error.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count) {
  if (count <= 0) return;
  const DataType dt = src.dtype();
  if (dt == DataType::kString) {
    std::copy(src.strings() + src_off, src.strings() + src_off + count, dst.strings() + dst_off);
    return;
  }
  const int bits = DataTypeBits(dt);
  if (bits % 8 == 0) {
    const size_t bytes = static_cast<size_t>(bits / 8);
    std::memcpy(static_cast<uint8_t*>(dst.raw_data()) + static_cast<size_t>(dst_off) * bytes,
                static_cast<const uint8_t*>(src.raw_data()) + static_cast<size_t>(src_off) * bytes,
                static_cast<size_t>(count) * bytes);
    return;
  }
  // Packed sub-byte elements, low bits first.
  const int per_byte = 8 / bits;
  const auto mask = static_cast<uint8_t>((1u << bits) - 1u);
  const auto* s = static_cast<const uint8_t*>(src.raw_data());
  auto* d = static_cast<uint8_t*>(dst.raw_data());
  for (int64_t i = 0; i < count; ++i) {
    const int64_t si = src_off + i, di = dst_off + i;
    const int sshift = static_cast<int>(si % per_byte) * bits;
    const int dshift = static_cast<int>(di % per_byte) * bits;
    const auto v = static_cast<uint8_t>((s[si / per_byte] >> sshift) & mask);
    uint8_t& byte = d[di / per_byte];
    byte = static_cast<uint8_t>((byte & ~(mask << dshift)) | (v << dshift));
  }
}

namespace {

// outer = prod(shape[:axis]), inner = prod(shape[axis+1:]).
void OuterInner(const Shape& shape, int64_t axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
}

}  // namespace

Tensor SliceAlongAxis(const Tensor& x, int64_t axis, int64_t index) {
  Shape out_shape = x.shape();
  const int64_t dim = out_shape[static_cast<size_t>(axis)];
  out_shape.erase(out_shape.begin() + axis);
  Tensor out(x.dtype(), out_shape);
  int64_t outer, inner;
  OuterInner(x.shape(), axis, outer, inner);
  if (outer == 1) {
    CopyElements(x, index * inner, out, 0, inner);
  } else {
    for (int64_t o = 0; o < outer; ++o) CopyElements(x, (o * dim + index) * inner, out, o * inner, inner);
  }
  return out;
}

void WriteAlongAxis(const Tensor& part, Tensor& out, int64_t axis, int64_t index) {
  const int64_t dim = out.dim(axis);
  int64_t outer, inner;
  OuterInner(out.shape(), axis, outer, inner);
  for (int64_t o = 0; o < outer; ++o) CopyElements(part, o * inner, out, (o * dim + index) * inner, inner);
}

Tensor ConcatAlongAxis(const std::vector<Tensor>& parts, int64_t axis, const std::string& what) {
  const Tensor& first = parts.front();
  Shape out_shape = first.shape();
  const auto a = static_cast<size_t>(axis);
  int64_t total = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const Tensor& p = parts[k];
    if (p.dtype() != first.dtype()) {
      throw InvalidArgumentError(what + ": element " + std::to_string(k) + " has type " +
                                 std::string(DataTypeName(p.dtype())) + ", expected " +
                                 std::string(DataTypeName(first.dtype())));
    }
    bool ok = p.rank() == first.rank();
    for (size_t d = 0; ok && d < out_shape.size(); ++d) ok = d == a || p.shape()[d] == first.shape()[d];
    if (!ok) {
      throw InvalidArgumentError(what + ": element " + std::to_string(k) + " has shape " + ShapeToString(p.shape()) +
                                 ", which cannot be concatenated with " + ShapeToString(first.shape()) +
                                 " along axis " + std::to_string(axis));
    }
    total += p.shape()[a];
  }
  out_shape[a] = total;
  Tensor out(first.dtype(), out_shape);
  int64_t outer, inner;
  OuterInner(out_shape, axis, outer, inner);
  const int64_t out_block = total * inner;
  int64_t offset = 0;  // along the axis, in elements of one outer block
  for (const Tensor& p : parts) {
    const int64_t block = p.shape()[a] * inner;
    for (int64_t o = 0; o < outer; ++o) CopyElements(p, o * block, out, o * out_block + offset, block);
    offset += block;
  }
  return out;
}

Tensor StackAlongNewAxis(const std::vector<Tensor>& parts, int64_t axis, const std::string& what) {
  const Tensor& first = parts.front();
  for (size_t k = 1; k < parts.size(); ++k) {
    const Tensor& p = parts[k];
    if (p.dtype() != first.dtype() || p.shape() != first.shape()) {
      throw InvalidArgumentError(what + ": element " + std::to_string(k) + " is " +
                                 std::string(DataTypeName(p.dtype())) + ShapeToString(p.shape()) + ", expected " +
                                 std::string(DataTypeName(first.dtype())) + ShapeToString(first.shape()) +
                                 " like element 0");
    }
  }
  Shape out_shape = first.shape();
  out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(first.dtype(), out_shape);
  for (size_t k = 0; k < parts.size(); ++k) WriteAlongAxis(parts[k], out, axis, static_cast<int64_t>(k));
  return out;
}

Value CloneValue(const Value& v) {
  Value out;
  if (v.is_tensor()) {
    out = Value(v.tensor().Clone());
  } else if (v.is_sequence()) {
    TensorSequence s;
    s.elem_type = v.sequence().elem_type;
    s.tensors.reserve(v.sequence().tensors.size());
    for (const Tensor& t : v.sequence().tensors) s.tensors.push_back(t.Clone());
    out = Value(std::move(s));
  }
  out.set_optional(v.is_optional());
  return out;
}

namespace {

const ir::TypeInfo* InnermostTensorType(const ir::TypeInfo* t) {
  while (t && (t->kind == ir::TypeInfo::Kind::kSequence || t->kind == ir::TypeInfo::Kind::kOptional)) {
    t = t->elem.get();
  }
  return t;
}

}  // namespace

DataType StaticElemType(const ir::Value* v, DataType fallback) {
  const ir::TypeInfo* t = v ? InnermostTensorType(&v->type()) : nullptr;
  if (t && t->kind == ir::TypeInfo::Kind::kTensor && t->elem_type != DataType::kUndefined) return t->elem_type;
  return fallback;
}

Shape StaticShapeOrZeros(const ir::Value* v) {
  Shape shape;
  if (!v || v->type().kind != ir::TypeInfo::Kind::kTensor || !v->type().shape) return shape;
  for (const ir::Dim& d : *v->type().shape) shape.push_back(d.is_static() ? d.value : 0);
  return shape;
}

std::string ValueKindName(const Value& v) {
  std::string s;
  if (v.is_none()) return v.is_optional() ? "an empty optional" : "no value";
  s = v.is_tensor() ? "a tensor" : "a sequence";
  if (v.is_optional()) s = "an optional holding " + s;
  return s;
}

}  // namespace ferry::ref
