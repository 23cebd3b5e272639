// Error statistics between two tensors of one value (`ferry compare`): side A (the configuration under test)
// against side B (the oracle: another configuration or stored reference outputs).
//
// An element pair (a, b) is within tolerance when |a - b| <= atol + rtol * |b| (numpy.allclose with b as the
// reference), when both are NaN, or when both are the same infinity. NaN or an infinity on one side only is a
// breach. The error figures are over the pairs where both sides are finite:
//   max_abs   max |a - b|
//   max_rel   max |a - b| / |b| over the pairs with b != 0
//   mean_abs  mean |a - b|
//   cosine    a.b / (|a| |b|); 1 when both are all zeros, 0 when only one is
// The worst element is the first pair with a NaN/infinity on one side only, else the pair with the largest
// |a - b|. Integer, bool and string tensors compare exactly (a tolerance does not apply; the figures are still
// reported for integers and bools).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::tools {

struct CompareTolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
};

struct ErrorStats {
  std::string problem;  // non-empty when the values cannot be compared element-wise (dtype, shape, kind)
  int64_t elements = 0;
  int64_t mismatched = 0;  // pairs outside the tolerance (one-sided NaN/Inf included)
  double max_abs = 0, max_rel = 0, mean_abs = 0, cosine = 1;
  int64_t worst_index = -1;          // flat index of the worst element; -1 when no element differs
  std::vector<int64_t> worst_coord;  // the same as a coordinate
  double worst_a = 0, worst_b = 0;   // the values there
  int64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0;
  bool pass() const { return problem.empty() && mismatched == 0; }
};

// Statistics of `a` against `b` (the reference side).
ErrorStats CompareStats(const Tensor& a, const Tensor& b, const CompareTolerance& tol);

// How far outside the tolerance `s` is, for ranking values: 0 when it passes, else a positive number growing
// with the share of mismatched elements and the error (a problem ranks highest).
double BreachScore(const ErrorStats& s);

// A tolerance per value name with a default (`--atol/--rtol` and `--per-output NAME=ATOL[,RTOL]`).
struct ToleranceSet {
  CompareTolerance all;
  std::map<std::string, CompareTolerance> by_name;
  const CompareTolerance& For(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? all : it->second;
  }
};

// Parses "NAME=ATOL" or "NAME=ATOL,RTOL" (RTOL defaults to `fallback_rtol`); throws InvalidArgumentError
// naming the text.
std::pair<std::string, CompareTolerance> ParsePerOutputTolerance(const std::string& text, double fallback_rtol);

}  // namespace ferry::tools
