// The per-element rules of ref's elementwise ops that other backends apply too, so that each semantic choice has
// one definition: integer Div's rounding and zero rule, Mod's sign rule, Pow's exact integer power, BitShift's
// out-of-range shift, Shrink and Swish. Floats compute in their accumulation type (float for float16/bfloat16);
// the caller converts half types to and from float around these.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/ref/elementwise.h"

namespace ferry::ref {

// a / b for integers: truncates toward zero like C (numpy's trunc-divide used by the ONNX tests); x / 0 = 0 and
// INT_MIN / -1 = INT_MIN (wrapping).
template <typename T>
T IntDiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(WrapInt<T>(0) - static_cast<WrapInt<T>>(a));
  }
  return static_cast<T>(a / b);
}

// Mod: kFmod gives C's fmod (the dividend's sign), else the remainder with the divisor's sign (Python's %). An
// integer divisor of 0 gives 0, and so does -1 (which avoids INT_MIN % -1).
template <bool kFmod, typename T>
T ModValue(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (!kFmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    using A = Acc<T>;
    const A x = static_cast<A>(a), y = static_cast<A>(b);
    A r = std::fmod(x, y);
    if (!kFmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return static_cast<T>(r);
  }
}

// base ^ exp for integers: exact (wrapping) repeated squaring; a negative exponent gives the integral reciprocal
// where there is one (of 1 and -1), else 0.
template <typename T, typename E>
T IntPow(T base, E exp) {
  using W = WrapInt<T>;
  if constexpr (std::is_signed_v<E>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return (exp % 2) ? T(-1) : T(1);
      }
      return 0;
    }
  }
  W result = 1, b = static_cast<W>(base);
  auto e = static_cast<std::make_unsigned_t<E>>(exp);
  while (e) {
    if (e & 1u) result = static_cast<W>(result * b);
    b = static_cast<W>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// Pow: integer ^ integer is IntPow; anything else computes in double and converts back (FloatToIntWrap for an
// integer base).
template <typename T, typename E>
T PowValue(T x, E y) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return IntPow(x, y);
  } else {
    const double r =
        std::pow(static_cast<double>(static_cast<Acc<T>>(x)), static_cast<double>(static_cast<Acc<E>>(y)));
    if constexpr (std::is_integral_v<T>) {
      return FloatToIntWrap<T>(r);
    } else {
      return static_cast<T>(static_cast<Acc<T>>(r));
    }
  }
}

// BitShift on an unsigned integer: a << b (kLeft) or a >> b; shifting by the bit width or more gives 0.
template <bool kLeft, typename T>
T BitShiftValue(T a, T b) {
  if (b >= sizeof(T) * 8) return 0;
  using W = WrapInt<T>;
  return static_cast<T>(kLeft ? static_cast<W>(static_cast<W>(a) << b) : static_cast<W>(a >> b));
}

// Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0. Integers compute in double and convert back
// (FloatToIntWrap); floats in their own type (A = Acc<T>).
template <typename A>
A ShrinkFloat(A x, float lambd, float bias) {
  return x < -static_cast<A>(lambd) ? x + static_cast<A>(bias)
                                    : (x > static_cast<A>(lambd) ? x - static_cast<A>(bias) : A(0));
}
template <typename T>
T ShrinkInt(T v, float lambd, float bias) {
  const double x = static_cast<double>(v);
  return FloatToIntWrap<T>(x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0));
}

// Swish: x * sigmoid(alpha x), the sigmoid written so that exp never overflows.
template <typename A>
A SwishValue(A x, float alpha) {
  const A z = static_cast<A>(alpha) * x;
  const A s = z >= 0 ? A(1) / (A(1) + std::exp(-z)) : std::exp(z) / (A(1) + std::exp(z));
  return x * s;
}

}  // namespace ferry::ref
