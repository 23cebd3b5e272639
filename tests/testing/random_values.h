// Seeded random test data shared by the tests: the same seed gives the same values on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ferry::testing {

// `n` floats drawn uniformly from [lo, hi) by std::mt19937(seed).
inline std::vector<float> UniformFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

}  // namespace ferry::testing
