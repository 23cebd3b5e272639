// Cast's element conversion, shared by the ref and cpu Cast/CastLike kernels so both backends run the same rules
// (kernels/ref/cast.cc lists them: truncation and wrapping, float8 saturation and rounding, float4, packed
// int4/uint4/int2/uint2, strings).
//
// Elements are addressed by their index in the whole tensor: a packed type (4 or 2 bits) is read and written
// with ReadSubByte/WriteSubByte at that index, a string tensor is an array of std::string.
#pragma once

#include <cstdint>

#include "core/float8.h"
#include "ir/graph.h"

namespace ferry::ref {

// The attributes that steer a cast (Cast and CastLike): `saturate` (opset 19+, float8 targets) and `round_mode`
// (opset 24+, float8e8m0 targets).
struct CastOptions {
  bool saturate = true;
  E8M0Rounding round = E8M0Rounding::kUp;
};

// Reads saturate/round_mode; throws InvalidModelError naming the node for an unknown round_mode.
CastOptions ReadCastOptions(const ir::Node& node);

// Every known type but the complex ones.
bool Castable(DataType t);

// Elements per byte of a packed type (2 for 4-bit types, 4 for 2-bit types), 0 for the others.
int PackedPerByte(DataType t);

// Converts elements [begin, end) of `in` (type `src`) into the same elements of `out` (type `dst`), both
// Castable. For a packed `dst`, `begin` must be a multiple of 4 (a byte boundary of every packed type) and the
// bytes holding [begin, end) are overwritten (cleared first), so ranges on such boundaries may run concurrently.
void CastRange(DataType src, const void* in, DataType dst, void* out, int64_t begin, int64_t end,
               const CastOptions& opt);

// All n elements, on up to `threads` threads, in chunks on byte boundaries of packed types.
void CastElements(int threads, DataType src, const void* in, DataType dst, void* out, int64_t n,
                  const CastOptions& opt);

}  // namespace ferry::ref
