// Static types of IR values: tensors with (possibly symbolic) shapes, sequences, optionals, maps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/dtype.h"

namespace ferry::ir {

// One dimension: a known size, a named symbol ("batch"), or unknown (neither).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  static Dim Static(int64_t v) { return Dim{v, {}}; }
  static Dim Symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSparseTensor, kSequence, kOptional, kMap };
  Kind kind = Kind::kUnknown;
  DataType elem_type = DataType::kUndefined;  // tensors; map key type for maps
  std::optional<std::vector<Dim>> shape;       // tensors: nullopt means unknown rank
  std::shared_ptr<TypeInfo> elem;              // sequence/optional element, map value

  static TypeInfo Tensor(DataType t, std::optional<std::vector<Dim>> shape = std::nullopt) {
    TypeInfo ti;
    ti.kind = Kind::kTensor;
    ti.elem_type = t;
    ti.shape = std::move(shape);
    return ti;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool has_static_shape() const;
  // A tensor's rank when known (nullopt otherwise, or when not a tensor).
  std::optional<int64_t> rank() const;
  // A tensor's dims when every one is static (nullopt otherwise, or when not a tensor).
  std::optional<std::vector<int64_t>> static_dims() const;
  std::string ToString() const;  // "float32[1,3,N,224]", "seq(float32[?])", "optional(...)"
};

}  // namespace ferry::ir
