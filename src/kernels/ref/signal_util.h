// Helpers shared by the signal-processing kernels (DFT, STFT, window functions, MelWeightMatrix): scalar input
// readers and a 1-D complex DFT in double precision (iterative radix-2 FFT for power-of-two lengths, a direct
// O(n^2) sum with an exact twiddle table otherwise).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

// A scalar (or one-element) int32/int64 tensor.
inline int64_t ReadScalarInt(const Tensor& t, const std::string& what, const std::string& name) {
  if (t.size() != 1)
    throw InvalidArgumentError(what + ": " + name + " must be a scalar, got shape " + ShapeToString(t.shape()));
  return ReadInt64s(t, what + ": " + name)[0];
}

// A scalar (or one-element) tensor of any real numeric type, as double.
inline double ReadScalarDouble(const Tensor& t, const std::string& what, const std::string& name) {
  if (t.size() != 1)
    throw InvalidArgumentError(what + ": " + name + " must be a scalar, got shape " + ShapeToString(t.shape()));
  double v = 0;
  Dispatch(NumericTypes{}, t.dtype(), what + ": " + name,
           [&](auto tag) { v = static_cast<double>(static_cast<Acc<decltype(tag)>>(t.data<decltype(tag)>()[0])); });
  return v;
}

// In-place DFT of `x` (length n): X[k] = sum_j x[j] exp(-+2 pi i jk / n); sign + when `inverse` (no 1/n scaling).
inline void DftInPlace(std::vector<std::complex<double>>& x, bool inverse) {
  const size_t n = x.size();
  if (n <= 1) return;
  const double sign = inverse ? 1.0 : -1.0;
  if ((n & (n - 1)) == 0) {
    for (size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      const size_t half = len / 2;
      for (size_t k = 0; k < half; ++k) {
        const double angle = sign * 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(len);
        const std::complex<double> w(std::cos(angle), std::sin(angle));
        for (size_t s = 0; s < n; s += len) {
          const std::complex<double> u = x[s + k];
          const std::complex<double> v = x[s + k + half] * w;
          x[s + k] = u + v;
          x[s + k + half] = u - v;
        }
      }
    }
    return;
  }
  std::vector<std::complex<double>> tw(n);
  for (size_t k = 0; k < n; ++k) {
    const double angle = sign * 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    tw[k] = {std::cos(angle), std::sin(angle)};
  }
  std::vector<std::complex<double>> out(n);
  for (size_t k = 0; k < n; ++k) {
    std::complex<double> acc = 0;
    size_t idx = 0;
    for (size_t j = 0; j < n; ++j) {
      acc += x[j] * tw[idx];
      idx += k;
      if (idx >= n) idx -= n;
    }
    out[k] = acc;
  }
  x.swap(out);
}

}  // namespace ferry::ref
