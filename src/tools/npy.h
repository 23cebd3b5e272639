// NumPy .npy files <-> ferry::Tensor.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, C order only, with these dtypes (any byte order; '>' data is
// byte-swapped): f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16, unicode strings '<U<n>' and byte strings '|S<n>'
// (both become string tensors holding UTF-8; trailing NULs are stripped, as NumPy does). Fortran order,
// structured dtypes, object arrays, a header that does not parse, a negative or overflowing shape, truncated data
// or trailing bytes all throw InvalidArgumentError naming the file and the problem; nothing is allocated before
// the data size has been checked against the file size.
//
// Writing uses version 1.0 (2.0 when the header needs it) with little-endian descriptors. Types NumPy lacks are
// widened so every value stays exact: bfloat16 is written as float32 ('<f4'; the dtype is not recorded, so it
// reads back as float32), int4/int2 as '|i1', uint4/uint2 as '|u1'. String tensors (UTF-8) are written as '<U<n>'
// with n the longest string in code points; invalid UTF-8 is an InvalidArgumentError. The float8 and float4
// types have no exact NumPy counterpart and are refused with InvalidArgumentError.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::tools {

// Reads `path`; error messages name it.
Tensor ReadNpy(const std::string& path);
// Parses a whole .npy file held in memory; `source` names it in error messages.
Tensor ParseNpy(std::span<const uint8_t> bytes, std::string_view source = "<memory>");

// Writes `tensor` to `path` (replacing it). Throws InvalidArgumentError if the file cannot be written or the
// dtype has no .npy form.
void WriteNpy(const std::string& path, const Tensor& tensor);
// The bytes of the .npy file WriteNpy would write.
std::vector<uint8_t> EncodeNpy(const Tensor& tensor);

}  // namespace ferry::tools
