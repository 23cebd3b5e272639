#include "core/float8.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace ferry {
namespace {

// A small binary float format: sign bit at `sign_bit`, then exponent, then `mant_bits` of mantissa.
struct MiniFloat {
  int mant_bits;
  int exp_bits;
  int bias;
  double max;             // largest finite magnitude
  uint8_t max_code;       // its code (without sign)
  bool fnuz;              // no negative zero; the single NaN is the "negative zero" code
  bool ieee_inf;          // exponent all ones: inf (mantissa 0) or NaN (e5m2)
  bool nan_all_ones;      // exponent and mantissa all ones is NaN (e4m3fn)
  uint8_t nan_code;       // NaN produced on conversion (without sign for non-fnuz)
  bool has_overflow_code; // false: out-of-range values always saturate (float4)
};

constexpr MiniFloat kE4M3FN{3, 4, 7, 448.0, 0x7E, false, false, true, 0x7F, true};
constexpr MiniFloat kE4M3FNUZ{3, 4, 8, 240.0, 0x7F, true, false, false, 0x80, true};
constexpr MiniFloat kE5M2{2, 5, 15, 57344.0, 0x7B, false, true, false, 0x7E, true};
constexpr MiniFloat kE5M2FNUZ{2, 5, 16, 57344.0, 0x7F, true, false, false, 0x80, true};
constexpr MiniFloat kE2M1{1, 2, 1, 6.0, 0x7, false, false, false, 0x8, false};

// Rounds a non-negative value that is an exact multiple of 1/2 away from an integer, or anything, to the
// nearest integer with ties to even. `n` is exact in double for every input of interest.
double RoundHalfEven(double n) {
  double f = std::floor(n);
  double d = n - f;
  if (d > 0.5 || (d == 0.5 && std::fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

uint8_t Encode(const MiniFloat& fmt, double x, bool saturate) {
  const int sign_shift = fmt.mant_bits + fmt.exp_bits;
  const uint8_t sign = std::signbit(x) ? static_cast<uint8_t>(1u << sign_shift) : 0;
  if (std::isnan(x)) return fmt.fnuz || !fmt.has_overflow_code ? fmt.nan_code : static_cast<uint8_t>(fmt.nan_code | sign);
  const bool sat = saturate || !fmt.has_overflow_code;
  auto overflow = [&]() -> uint8_t {
    if (sat) return static_cast<uint8_t>(fmt.max_code | sign);
    if (fmt.ieee_inf) return static_cast<uint8_t>((((1u << fmt.exp_bits) - 1u) << fmt.mant_bits) | sign);
    if (fmt.fnuz) return fmt.nan_code;
    return static_cast<uint8_t>(fmt.nan_code | sign);
  };
  double a = std::fabs(x);
  if (std::isinf(a)) return overflow();
  const uint8_t zero = fmt.fnuz ? 0 : sign;
  if (a == 0) return zero;
  const int emin = 1 - fmt.bias;  // exponent of the smallest normal number
  int k = 0;
  std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
  const int e = k - 1;
  const int q = (e < emin ? emin : e) - fmt.mant_bits;  // exponent of one unit in the last place
  const double r = RoundHalfEven(std::ldexp(a, -q));
  if (std::ldexp(r, q) > fmt.max) return overflow();
  if (r == 0) return zero;
  uint32_t code;
  if (e < emin) {
    code = static_cast<uint32_t>(r);  // subnormal (r == 2^mant_bits carries into the smallest normal)
  } else {
    code = (static_cast<uint32_t>(e + fmt.bias) << fmt.mant_bits) +
           (static_cast<uint32_t>(r) - (1u << fmt.mant_bits));  // r == 2^(mant_bits+1) carries into the exponent
  }
  return static_cast<uint8_t>(code | sign);
}

float Decode(const MiniFloat& fmt, uint8_t code) {
  const int sign_shift = fmt.mant_bits + fmt.exp_bits;
  const uint32_t mask = (1u << (sign_shift + 1)) - 1u;
  code = static_cast<uint8_t>(code & mask);
  const bool neg = (code >> sign_shift) & 1u;
  const uint32_t exp = (code >> fmt.mant_bits) & ((1u << fmt.exp_bits) - 1u);
  const uint32_t mant = code & ((1u << fmt.mant_bits) - 1u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (fmt.fnuz && code == (1u << sign_shift)) return nan;
  if (fmt.nan_all_ones && (code & ~(1u << sign_shift)) == ((1u << sign_shift) - 1u)) return neg ? -nan : nan;
  if (fmt.ieee_inf && exp == (1u << fmt.exp_bits) - 1u) {
    if (mant == 0) return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return neg ? -nan : nan;
  }
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - fmt.bias - fmt.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant + (1u << fmt.mant_bits)), static_cast<int>(exp) - fmt.bias - fmt.mant_bits);
  }
  return static_cast<float>(neg ? -v : v);
}

}  // namespace

uint8_t DoubleToFloat8E4M3FN(double x, bool saturate) { return Encode(kE4M3FN, x, saturate); }
uint8_t DoubleToFloat8E4M3FNUZ(double x, bool saturate) { return Encode(kE4M3FNUZ, x, saturate); }
uint8_t DoubleToFloat8E5M2(double x, bool saturate) { return Encode(kE5M2, x, saturate); }
uint8_t DoubleToFloat8E5M2FNUZ(double x, bool saturate) { return Encode(kE5M2FNUZ, x, saturate); }
uint8_t DoubleToFloat4E2M1(double x) { return Encode(kE2M1, x, true); }

float Float8E4M3FNToFloat(uint8_t code) { return Decode(kE4M3FN, code); }
float Float8E4M3FNUZToFloat(uint8_t code) { return Decode(kE4M3FNUZ, code); }
float Float8E5M2ToFloat(uint8_t code) { return Decode(kE5M2, code); }
float Float8E5M2FNUZToFloat(uint8_t code) { return Decode(kE5M2FNUZ, code); }
float Float4E2M1ToFloat(uint8_t code) { return Decode(kE2M1, code); }

bool ParseE8M0Rounding(const char* s, E8M0Rounding* out) {
  if (std::strcmp(s, "up") == 0) {
    *out = E8M0Rounding::kUp;
  } else if (std::strcmp(s, "down") == 0) {
    *out = E8M0Rounding::kDown;
  } else if (std::strcmp(s, "nearest") == 0) {
    *out = E8M0Rounding::kNearest;
  } else {
    return false;
  }
  return true;
}

uint8_t DoubleToFloat8E8M0(double x, bool saturate, E8M0Rounding mode) {
  if (std::isnan(x)) return 0xFF;
  double a = std::fabs(x);
  if (std::isinf(a)) return saturate ? 0xFE : 0xFF;
  if (a == 0) return 0x00;
  int k = 0;
  double m = std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1): a = (2m) * 2^(k-1)
  int e = k - 1;
  switch (mode) {
    case E8M0Rounding::kUp:
      if (m != 0.5) ++e;
      break;
    case E8M0Rounding::kDown:
      break;
    case E8M0Rounding::kNearest:
      if (m >= 0.75) ++e;  // ties (1.5 * 2^e) go to the larger power of two
      break;
  }
  int code = e + 127;
  if (code < 0) return 0x00;
  if (code > 254) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(code);
}

float Float8E8M0ToFloat(uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(std::ldexp(1.0, static_cast<int>(code) - 127));
}

bool IsSmallFloat(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}

uint8_t DoubleToSmallFloat(DataType t, double x, bool saturate, E8M0Rounding mode) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return DoubleToFloat8E4M3FN(x, saturate);
    case DataType::kFloat8E4M3FNUZ: return DoubleToFloat8E4M3FNUZ(x, saturate);
    case DataType::kFloat8E5M2: return DoubleToFloat8E5M2(x, saturate);
    case DataType::kFloat8E5M2FNUZ: return DoubleToFloat8E5M2FNUZ(x, saturate);
    case DataType::kFloat8E8M0: return DoubleToFloat8E8M0(x, saturate, mode);
    case DataType::kFloat4E2M1: return DoubleToFloat4E2M1(x);
    default: return 0;
  }
}

float SmallFloatToFloat(DataType t, uint8_t code) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return Float8E4M3FNToFloat(code);
    case DataType::kFloat8E4M3FNUZ: return Float8E4M3FNUZToFloat(code);
    case DataType::kFloat8E5M2: return Float8E5M2ToFloat(code);
    case DataType::kFloat8E5M2FNUZ: return Float8E5M2FNUZToFloat(code);
    case DataType::kFloat8E8M0: return Float8E8M0ToFloat(code);
    case DataType::kFloat4E2M1: return Float4E2M1ToFloat(code);
    default: return 0;
  }
}

}  // namespace ferry
