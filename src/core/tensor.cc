#include "ferry/tensor.h"

#include <cstring>

#include "core/buffer_pool.h"
#include "ferry/error.h"

namespace ferry {

int64_t ShapeElementCount(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw InvalidArgumentError("shape " + ShapeToString(shape) + " has a negative dimension");
    if (__builtin_mul_overflow(n, d, &n)) {
      throw ResourceExhaustedError("shape " + ShapeToString(shape) + ": element count overflows int64");
    }
  }
  return n;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

size_t StorageBytes(DataType dtype, int64_t count) {
  int bits = DataTypeBits(dtype);
  if (dtype == DataType::kString) return static_cast<size_t>(count) * sizeof(std::string);
  unsigned __int128 total = static_cast<unsigned __int128>(count) * static_cast<unsigned>(bits);
  total = (total + 7) / 8;
  constexpr size_t kMaxAllocation = size_t{1} << 46;  // 64 TiB: beyond any machine; avoids size_t overflow
  if (total > kMaxAllocation) {
    throw ResourceExhaustedError("tensor of " + std::to_string(count) + " " + std::string(DataTypeName(dtype)) +
                                 " elements is too large to allocate");
  }
  return static_cast<size_t>(total);
}

}  // namespace

Tensor::Tensor(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  if (!IsKnownDataType(static_cast<int32_t>(dtype))) {
    throw InvalidArgumentError("cannot create a tensor of unknown data type " +
                               std::to_string(static_cast<int32_t>(dtype)));
  }
  size_ = ShapeElementCount(shape_);
  size_t bytes = StorageBytes(dtype, size_);
  if (dtype == DataType::kString) {
    auto* strings = new std::string[static_cast<size_t>(size_)];
    owner_ = std::shared_ptr<void>(strings, [](void* p) { delete[] static_cast<std::string*>(p); });
    data_ = strings;
    return;
  }
  // Keep at least one byte so data() is never null, and align for any SIMD use.
  owner_ = AllocateBuffer(bytes, /*zero=*/true);
  data_ = owner_.get();
}

Tensor Tensor::Uninitialized(DataType dtype, Shape shape) {
  if (dtype == DataType::kString) return Tensor(dtype, std::move(shape));
  if (!IsKnownDataType(static_cast<int32_t>(dtype))) {
    throw InvalidArgumentError("cannot create a tensor of unknown data type " +
                               std::to_string(static_cast<int32_t>(dtype)));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = ShapeElementCount(t.shape_);
  t.owner_ = AllocateBuffer(StorageBytes(dtype, t.size_), /*zero=*/false);
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::Wrap(DataType dtype, Shape shape, std::shared_ptr<void> owner, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = ShapeElementCount(t.shape_);
  t.owner_ = std::move(owner);
  t.data_ = data;
  return t;
}

size_t Tensor::nbytes() const {
  if (dtype_ == DataType::kString) return static_cast<size_t>(size_);
  return StorageBytes(dtype_, size_);
}

Tensor Tensor::Clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < size_; ++i) t.strings()[i] = strings()[i];
  } else if (nbytes()) {
    std::memcpy(t.data_, data_, nbytes());
  }
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  int64_t n = ShapeElementCount(shape);
  if (n != size_) {
    throw InvalidArgumentError("cannot reshape " + ShapeToString(shape_) + " to " + ShapeToString(shape));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace ferry
