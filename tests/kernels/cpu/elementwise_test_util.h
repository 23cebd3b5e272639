// Helpers for the tests of the cpu elementwise kernels (binary_elementwise_test.cc, unary_elementwise_test.cc):
// the ISA variants, a session under a chosen --isa, a comparison against ref that also checks which cpu kernel
// ran (so every variant is proven to be tested), and the refused-configuration check.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/isa.h"
#include "testing/op_harness.h"

namespace ferry::testing {

// An ISA variant of the elementwise kernels: the --isa list that selects it and the tag in its kernel names
// (cpu.f32_add__avx512.7, cpu.f32_add__avx2.7, cpu.f32_add__scalar.7).
struct EwVariant {
  const char* isa;
  const char* impl;
};
inline constexpr EwVariant kEwAvx512{"avx512f", "avx512"};
inline constexpr EwVariant kEwAvx2{"avx2,fma", "avx2"};
inline constexpr EwVariant kEwScalar{"none", "scalar"};

// True when this CPU (narrowed by FERRY_ISA) has every extension of the variant.
inline bool EwHostHas(const EwVariant& v) { return DefaultIsa().contains(IsaSet::Parse(v.isa)); }

inline int64_t EwPick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

inline std::unique_ptr<Session> EwSession(const OpTest& t, const std::vector<std::string>& backends, bool strict,
                                          int threads, const std::string& isa = "") {
  return SessionFor(OneNodeModel(t), backends, strict, threads, isa);
}

// Runs `t` on ref and on cpu alone (fallback forbidden, t.threads threads, --isa `isa`); the cpu node must run
// `kernel`, and every output must match ref within t.rtol/t.atol (NaN matches NaN, infinities exactly).
inline ::testing::AssertionResult MatchesRefWithKernel(const OpTest& t, const std::string& isa,
                                                       const std::string& kernel) {
  std::vector<std::pair<std::string, Tensor>> want, got;
  try {
    want = EwSession(t, {"ref"}, true, 1)->Run(Feeds(t));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": ref failed: " << e.what();
  }
  try {
    auto session = EwSession(t, {"cpu"}, true, t.threads, isa);
    const std::string& ran = session->placement().nodes.at(0).kernel;
    if (ran != kernel) return ::testing::AssertionFailure() << t.op << ": ran " << ran << ", want " << kernel;
    got = session->Run(Feeds(t));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << t.op << ": cpu failed: " << e.what();
  }
  if (got.size() != want.size()) return ::testing::AssertionFailure() << t.op << ": output count differs";
  for (size_t i = 0; i < want.size(); ++i) {
    auto r = TensorsClose(got[i].second, want[i].second, t.rtol, t.atol);
    if (!r) return ::testing::AssertionFailure() << t.op << " output " << i << " on cpu: " << r.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ferry::testing
