// IEEE half precision and bfloat16 storage types with round-to-nearest-even conversion from float.
#pragma once

#include <bit>
#include <cstdint>

namespace ferry {

struct Float16 {
  uint16_t bits = 0;

  Float16() = default;
  explicit Float16(float f) : bits(FromFloat(f)) {}
  static Float16 FromBits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return ToFloat(bits); }

  static uint16_t FromFloat(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {                                               // subnormal half or zero
      if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
      uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
      int shift = 126 - static_cast<int>(abs >> 23);  // 14..24: aligns the mantissa to half's subnormal grid
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t half = 1u << (shift - 1);
      uint32_t v = mant >> shift;
      if (rem > half || (rem == half && (v & 1u))) v += 1;
      return static_cast<uint16_t>(sign | v);
    }
    uint32_t v = ((abs - 0x38000000u) >> 13);
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) v += 1;
    return static_cast<uint16_t>(sign | v);
  }
  static float ToFloat(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0x1f) {
      out = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
      if (mant == 0) {
        out = sign;
      } else {
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while ((mant & 0x400u) == 0);
        out = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else {
      out = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(out);
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float f) : bits(FromFloat(f)) {}
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

  static uint16_t FromFloat(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<uint16_t>(x >> 16);
  }
};

}  // namespace ferry
