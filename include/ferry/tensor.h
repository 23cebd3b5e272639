// Tensor: a dtype, a shape and a reference-counted buffer. Copies share the buffer (like a shared_ptr);
// Clone() makes a deep copy. String tensors hold std::string elements; sub-byte types (int4, uint4,
// float4e2m1, int2, uint2) are packed low bits first, as in ONNX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ferry/dtype.h"

namespace ferry {

using Shape = std::vector<int64_t>;

// Number of elements of `shape`; throws InvalidArgumentError on a negative dim or int64 overflow.
int64_t ShapeElementCount(std::span<const int64_t> shape);
std::string ShapeToString(std::span<const int64_t> shape);  // "[1,3,224,224]"

class Tensor {
 public:
  Tensor() = default;
  // Allocates a zero-initialised tensor (empty strings for string tensors).
  Tensor(DataType dtype, Shape shape);
  // Allocates without initialising the elements (string tensors are still empty strings): for producers that
  // write every element.
  static Tensor Uninitialized(DataType dtype, Shape shape);
  // Wraps memory owned by `owner` (no copy). Not for string tensors.
  static Tensor Wrap(DataType dtype, Shape shape, std::shared_ptr<void> owner, void* data);
  template <typename T>
  static Tensor FromVector(DataType dtype, Shape shape, const std::vector<T>& values);

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t size() const { return size_; }  // element count
  size_t nbytes() const;                  // storage bytes (element count for strings)

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  std::string* strings() { return static_cast<std::string*>(data_); }
  const std::string* strings() const { return static_cast<const std::string*>(data_); }

  Tensor Clone() const;
  // True when this tensor is the only holder of its buffer (no copy, view or Reshaped alias shares it).
  bool buffer_unique() const { return owner_ && owner_.use_count() == 1; }
  // Same buffer, new shape with the same element count (throws otherwise).
  Tensor Reshaped(Shape shape) const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t size_ = 0;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

template <typename T>
Tensor Tensor::FromVector(DataType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  if constexpr (std::is_same_v<T, std::string>) {
    for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.size(); ++i) t.strings()[i] = values[i];
  } else {
    std::copy(values.begin(), values.begin() + std::min<size_t>(values.size(), static_cast<size_t>(t.size())),
              t.data<T>());
  }
  return t;
}

}  // namespace ferry
