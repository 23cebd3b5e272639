// Checked int64 arithmetic for values that come from untrusted input (model attributes, dims, constant inputs):
// nullopt when the exact result does not fit in int64, so callers report a bad model instead of overflowing.
#pragma once

#include <cstdint>
#include <optional>

namespace ferry {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace ferry
