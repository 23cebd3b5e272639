// Value: what flows along a graph edge at run time — a tensor, a sequence of tensors, or an optional that
// may be empty (ONNX optional types).
#pragma once

#include <memory>
#include <variant>
#include <vector>

#include "ferry/tensor.h"

namespace ferry {

struct TensorSequence {
  DataType elem_type = DataType::kUndefined;
  std::vector<Tensor> tensors;
};

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence };

  Value() = default;  // kNone: an absent value or an empty optional
  Value(Tensor t) : data_(std::move(t)) {}  // NOLINT(google-explicit-constructor)
  Value(TensorSequence s) : data_(std::move(s)) {}  // NOLINT(google-explicit-constructor)

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_tensor() const { return kind() == Kind::kTensor; }
  bool is_sequence() const { return kind() == Kind::kSequence; }
  bool is_none() const { return kind() == Kind::kNone; }

  const Tensor& tensor() const { return std::get<Tensor>(data_); }
  Tensor& tensor() { return std::get<Tensor>(data_); }
  const TensorSequence& sequence() const { return std::get<TensorSequence>(data_); }
  TensorSequence& sequence() { return std::get<TensorSequence>(data_); }

  // ONNX optional wrapping: an optional-typed value that holds an element (or none).
  bool is_optional() const { return optional_; }
  Value& set_optional(bool v) {
    optional_ = v;
    return *this;
  }

 private:
  std::variant<std::monostate, Tensor, TensorSequence> data_;
  bool optional_ = false;
};

}  // namespace ferry
