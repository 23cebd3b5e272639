// Shared core of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the weighted, ignore_index-aware
// gather of -input[n, target[n, d], d] and its reduction ("none", "sum", "mean"). Accumulation is in double.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

enum class LossReduction { kNone, kSum, kMean };

inline LossReduction ParseLossReduction(const ir::Node& node) {
  std::string r = node.GetString("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  throw InvalidModelError(node.Describe() + ": reduction must be 'none', 'sum' or 'mean', got '" + r + "'");
}

// Checks input [N, C, d1..dk] against target [N, d1..dk] and weight [C]; returns {N, C, D = prod(d1..dk)}.
inline std::vector<int64_t> LossDims(const Tensor& input, const Tensor& target, const Tensor* weight,
                                     const std::string& what) {
  if (input.rank() < 2)
    throw InvalidArgumentError(what + ": input must have rank >= 2 ([N, C, ...]), got " +
                               ShapeToString(input.shape()));
  bool ok = target.rank() == input.rank() - 1 && target.dim(0) == input.dim(0);
  for (int64_t i = 1; ok && i < target.rank(); ++i) ok = target.dim(i) == input.dim(i + 1);
  if (!ok)
    throw InvalidArgumentError(what + ": target shape " + ShapeToString(target.shape()) +
                               " does not match input shape " + ShapeToString(input.shape()) +
                               " (expected [N, d1, ..., dk] for input [N, C, d1, ..., dk])");
  const int64_t c = input.dim(1);
  if (weight && (weight->rank() != 1 || weight->dim(0) != c))
    throw InvalidArgumentError(what + ": weight must have shape [" + std::to_string(c) + "], got " +
                               ShapeToString(weight->shape()));
  int64_t d = 1;
  for (int64_t i = 2; i < input.rank(); ++i) d *= input.dim(i);
  return {input.dim(0), c, d};
}

// logp: [N, C, D] (already log-probabilities for NLL), target: [N, D], weight: [C] or nullptr.
// Writes per-element losses into `elem` ([N*D], doubles) and returns the reduced value for sum/mean.
template <typename T, typename TInd, typename LoadT>
double NllLossCore(const T* logp, const TInd* target, const T* weight, int64_t n, int64_t c, int64_t d,
                   bool has_ignore, int64_t ignore_index, LossReduction reduction, std::vector<double>& elem,
                   LoadT load, const std::string& what) {
  elem.assign(static_cast<size_t>(n * d), 0.0);
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t t = static_cast<int64_t>(target[i * d + j]);
      if (has_ignore && t == ignore_index) continue;
      if (t < 0 || t >= c)
        throw InvalidArgumentError(what + ": target value " + std::to_string(t) + " is out of range [0, " +
                                   std::to_string(c) + ")");
      const double w = weight ? load(weight[t]) : 1.0;
      const double v = -load(logp[(i * c + t) * d + j]) * w;
      elem[static_cast<size_t>(i * d + j)] = v;
      sum += v;
      weight_sum += w;
    }
  }
  if (reduction == LossReduction::kMean) return sum / weight_sum;  // 0/0 = NaN when every target is ignored
  return sum;
}

}  // namespace ferry::ref
