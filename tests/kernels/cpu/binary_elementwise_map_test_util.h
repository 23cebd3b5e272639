// Helpers for the tests of the cpu kernels built on binary_elementwise_map.h (pow, mod, prelu, compare, logical,
// variadic_elementwise): the broadcast shapes every one of them runs (scalar on either side, row, column, same
// shape, channel bias, a general two-sided broadcast, empty outputs, and outputs over the threading threshold),
// random inputs per dtype with edge values, and the check that a shape mismatch is an InvalidArgumentError from
// Prepare naming the node.
#pragma once

#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {

struct MapShapes {
  Shape a, b;
  std::string what;
};

// Every path of RunBinaryMap, both operand orders where it matters; `large` adds outputs over the 64K-element
// threading threshold.
inline std::vector<MapShapes> MapShapeCases(bool large = true) {
  std::vector<MapShapes> cases = {
      {{}, {}, "scalars"},
      {{17}, {17}, "same shape"},
      {{3, 33}, {3, 33}, "same shape 2-D"},
      {{4, 7}, {}, "vector-scalar"},
      {{1}, {2, 9}, "scalar-vector"},
      {{5, 16}, {16}, "row"},
      {{16}, {5, 16}, "row (reversed)"},
      {{6, 9}, {6, 1}, "column"},
      {{6, 1}, {6, 9}, "column (reversed)"},
      {{2, 3, 4, 5}, {3, 1, 1}, "channel"},
      {{3, 1, 5}, {1, 4, 1}, "general, both sides"},
      {{2, 1, 3, 1}, {4, 1, 7}, "general, rank differs"},
      {{0, 3}, {3}, "empty"},
      {{2, 0}, {1}, "empty, scalar"},
      {{1, 0}, {4, 1}, "empty, broadcast"},
  };
  if (large) {
    cases.push_back({{300, 257}, {300, 257}, "large same shape"});
    cases.push_back({{70001}, {}, "large vector-scalar"});
    cases.push_back({{1, 64, 40, 40}, {64, 1, 1}, "large channel"});
    cases.push_back({{400, 1}, {1, 300}, "large outer product"});
  }
  return cases;
}

// Random values of `dt`: floats (float32, float64, float16, bfloat16) in [lo, hi) with edge values (NaN, ±inf, ±0,
// denormals, ±1e30); integers (signed and unsigned, 8 to 64 bits) mostly in [-1000, 1000] (wrapped to the type)
// with 0, ±1 and the type's extremes mixed in; bools half true.
inline Tensor MapRandom(DataType dt, const Shape& shape, std::mt19937& rng, double lo = -10, double hi = 10) {
  if (IsFloatingPoint(dt) || dt == DataType::kBool) return RandomTensor(dt, shape, rng, lo, hi, true);
  Tensor t(dt, shape);
  auto fill = [&](auto* p, auto lowest, auto highest) {
    using T = std::remove_pointer_t<decltype(p)>;
    const T pool[] = {0, 1, static_cast<T>(-1), 2, static_cast<T>(-3), lowest, highest, static_cast<T>(lowest + 1)};
    for (int64_t i = 0; i < t.size(); ++i) {
      p[i] = EwPick(rng, 0, 3) ? static_cast<T>(EwPick(rng, -1000, 1000)) : pool[EwPick(rng, 0, 7)];
    }
  };
  auto fill_type = [&]<class T>(T) { fill(t.data<T>(), std::numeric_limits<T>::min(), std::numeric_limits<T>::max()); };
  switch (dt) {
    case DataType::kInt8: fill_type(int8_t{}); break;
    case DataType::kInt16: fill_type(int16_t{}); break;
    case DataType::kInt32: fill_type(int32_t{}); break;
    case DataType::kUint8: fill_type(uint8_t{}); break;
    case DataType::kUint16: fill_type(uint16_t{}); break;
    case DataType::kUint32: fill_type(uint32_t{}); break;
    case DataType::kUint64: fill_type(uint64_t{}); break;
    default: fill_type(int64_t{}); break;
  }
  return t;
}

// `t` against ref on every ISA variant this CPU has (AVX-512F, AVX2+FMA, baseline), each proven by the placed
// kernel's name: `stem` + "__" + the ISA tag + `suffix` (cpu.f32_prelu + __avx2 + .7).
inline ::testing::AssertionResult MatchesRefOnEveryIsa(const OpTest& t, const std::string& stem,
                                                       const std::string& suffix) {
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    auto r = MatchesRefWithKernel(t, v.isa, stem + "__" + v.impl + suffix);
    if (!r) return r << " (" << v.impl << ")";
  }
  return ::testing::AssertionSuccess();
}

// Runs `op` on cpu alone over graph inputs declared by dtype only, fed shapes that do not broadcast: Prepare must
// throw InvalidArgumentError naming the node ('n0') and the shapes.
inline void ExpectBroadcastErrorNamesNode(const std::string& op, int64_t opset, const std::vector<Tensor>& inputs,
                                          const std::string& shapes_text) {
  std::vector<NodeInput> decl;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    decl.push_back({"x" + std::to_string(i), inputs[i].dtype()});
    feeds.emplace_back("x" + std::to_string(i), inputs[i]);
  }
  auto session = OneNodeSession(op, decl, {"y"}, opset, nullptr, OnlyBackend("cpu", 1));
  try {
    session->Run(feeds);
    ADD_FAILURE() << op << ": expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'n0' (" + op + ")"), std::string::npos) << what;
    EXPECT_NE(what.find(shapes_text), std::string::npos) << what;
  }
}

}  // namespace ferry::testing
