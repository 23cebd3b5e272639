// Conversions between float/double and ONNX's small element formats: the float8 family (e4m3fn, e4m3fnuz,
// e5m2, e5m2fnuz, e8m0), float4e2m1 and the sub-byte integers (int4, uint4, int2, uint2). Pure functions on
// codes (the format's bit pattern in the low bits of a uint8_t), shared by Cast, QuantizeLinear and
// DequantizeLinear.
//
// Rounding is round-to-nearest-even (e8m0 has its own modes). `saturate` follows ONNX Cast (opset 19+):
// true clamps out-of-range values and infinities to the largest finite value of the format; false maps them to
// the format's infinity (e5m2) or NaN (the others). float4e2m1 has no inf/NaN and always saturates.
//
// Sub-byte tensors are packed low bits first: element i of an int4 tensor lives in byte i/2, bits 4*(i%2)..;
// element i of an int2 tensor lives in byte i/4, bits 2*(i%4)...
#pragma once

#include <cstdint>

#include "ferry/dtype.h"

namespace ferry {

// ---- float8 / float4 --------------------------------------------------------------------------------------
uint8_t DoubleToFloat8E4M3FN(double x, bool saturate = true);
uint8_t DoubleToFloat8E4M3FNUZ(double x, bool saturate = true);
uint8_t DoubleToFloat8E5M2(double x, bool saturate = true);
uint8_t DoubleToFloat8E5M2FNUZ(double x, bool saturate = true);
uint8_t DoubleToFloat4E2M1(double x);  // 4-bit code; NaN -> 0x8 (as the ONNX reference does)

float Float8E4M3FNToFloat(uint8_t code);
float Float8E4M3FNUZToFloat(uint8_t code);
float Float8E5M2ToFloat(uint8_t code);
float Float8E5M2FNUZToFloat(uint8_t code);
float Float4E2M1ToFloat(uint8_t code);  // low 4 bits

// ---- float8e8m0: an unsigned power of two, 2^(code-127); 0xFF is NaN ---------------------------------------
enum class E8M0Rounding { kUp, kDown, kNearest };
// Parses ONNX Cast's round_mode attribute ("up", "down", "nearest"); returns false for anything else.
bool ParseE8M0Rounding(const char* s, E8M0Rounding* out);
// The sign is ignored. Zero maps to code 0 (2^-127). Inf and overflow map to 0xFE when saturating, else 0xFF.
uint8_t DoubleToFloat8E8M0(double x, bool saturate = true, E8M0Rounding mode = E8M0Rounding::kUp);
float Float8E8M0ToFloat(uint8_t code);

// ---- by DataType (for the float8/float4 types above) -------------------------------------------------------
// True for the 8-bit float types and float4e2m1.
bool IsSmallFloat(DataType t);
// Encodes x in small-float type `t` (`saturate` and `mode` as above; ignored where they do not apply).
uint8_t DoubleToSmallFloat(DataType t, double x, bool saturate = true, E8M0Rounding mode = E8M0Rounding::kUp);
float SmallFloatToFloat(DataType t, uint8_t code);

// ---- sub-byte integers ------------------------------------------------------------------------------------
// int4/uint4/int2/uint2 codes: the low `bits` of the two's-complement value (casts wrap, as in ONNX's tests).
inline uint8_t IntToSubByte(DataType t, int64_t v) {
  return static_cast<uint8_t>(static_cast<uint64_t>(v) & ((DataTypeBits(t) == 2) ? 0x3u : 0xFu));
}
inline int64_t SubByteToInt(DataType t, uint8_t code) {
  switch (t) {
    case DataType::kInt4: return (code & 0x8u) ? static_cast<int64_t>(code & 0xFu) - 16 : (code & 0xFu);
    case DataType::kInt2: return (code & 0x2u) ? static_cast<int64_t>(code & 0x3u) - 4 : (code & 0x3u);
    case DataType::kUint2: return code & 0x3u;
    default: return code & 0xFu;
  }
}

// Reads / writes element i of a packed 4-bit or 2-bit tensor (`bits` is 4 or 2). WriteSubByte ORs into the
// byte, so the destination must start zeroed; elements sharing a byte must not be written concurrently.
inline uint8_t ReadSubByte(const void* data, int bits, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(data);
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  return static_cast<uint8_t>((p[i / per_byte] >> shift) & ((1u << bits) - 1u));
}
inline void WriteSubByte(void* data, int bits, int64_t i, uint8_t code) {
  auto* p = static_cast<uint8_t*>(data);
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  p[i / per_byte] = static_cast<uint8_t>(p[i / per_byte] | ((code & ((1u << bits) - 1u)) << shift));
}

}  // namespace ferry
