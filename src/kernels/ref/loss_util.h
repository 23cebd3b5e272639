// Shared core of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, for the ref and cpu kernels alike: the
// checks of Prepare (PrepareLoss), the labels' range check (CheckLossTargets), the log-softmax over the classes in
// double (LogSoftmaxColumns), and the weighted, ignore_index-aware gather of -logp[n, target[n, d], d]
// (LossColumns) with its reduction ("none", "sum", "mean"). Accumulation is in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

enum class LossReduction { kNone, kSum, kMean };

inline LossReduction ParseLossReduction(const ir::Node& node) {
  std::string r = node.GetString("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  throw InvalidModelError(node.Describe() + ": reduction must be 'none', 'sum' or 'mean', got '" + r + "'");
}

// The loop bounds of a loss: input [N, C, d1..dk] seen as [N, C, D = prod(d1..dk)].
struct LossShape {
  int64_t n = 0, c = 0, d = 1;
};

// Prepare of both losses: input 0 [N, C, d1..dk], input 1 (target) [N, d1..dk], optional input 2 (weight) [C]
// of input 0's dtype. Declares output 0 (the target's shape for "none", else a scalar) and, for an op with a second
// output (SoftmaxCrossEntropyLoss's log_prob), output 1 with input 0's shape when requested; returns {N, C, D}.
inline LossShape PrepareLoss(PrepareContext& ctx, LossReduction reduction) {
  const InputSpec& input = ctx.tensor_input(0);
  const InputSpec& target = ctx.tensor_input(1);
  const InputSpec* weight = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
  if (weight && weight->dtype != input.dtype) {
    throw InvalidArgumentError(ctx.Describe() + ": weight dtype " + std::string(DataTypeName(weight->dtype)) +
                               " differs from input dtype " + std::string(DataTypeName(input.dtype)) + " (" +
                               ctx.InputString(2) + ", " + ctx.InputString(0) + ")");
  }
  const size_t rank = input.shape.size();
  if (rank < 2) {
    throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2 ([N, C, ...]), got " +
                               ctx.InputString(0));
  }
  bool ok = target.shape.size() == rank - 1 && target.shape[0] == input.shape[0];
  for (size_t i = 1; ok && i < target.shape.size(); ++i) ok = target.shape[i] == input.shape[i + 1];
  if (!ok) {
    throw InvalidArgumentError(ctx.Describe() + ": target shape " + ShapeToString(target.shape) +
                               " does not match input shape " + ShapeToString(input.shape) +
                               " (expected [N, d1, ..., dk] for input [N, C, d1, ..., dk]; " + ctx.InputString(1) +
                               ")");
  }
  LossShape s{input.shape[0], input.shape[1], 1};
  if (weight && (weight->shape.size() != 1 || weight->shape[0] != s.c)) {
    throw InvalidArgumentError(ctx.Describe() + ": weight must have shape [" + std::to_string(s.c) + "], got " +
                               ctx.InputString(2));
  }
  for (size_t i = 2; i < rank; ++i) s.d *= input.shape[i];
  ctx.SetOutput(0, input.dtype, reduction == LossReduction::kNone ? target.shape : Shape{});
  if (ctx.output_requested(1)) {
    ctx.SetOutput(1, input.dtype, input.shape);
  } else if (ctx.output_count() > 1) {
    ctx.SetOutputDynamic(1);  // omitted: Compute does not write it
  }
  return s;
}

// Every target value but the ignored one must lie in [0, c): throws naming `what` at the first that does not.
template <typename TInd>
void CheckLossTargets(const TInd* target, int64_t count, int64_t c, bool has_ignore, int64_t ignore_index,
                      const std::string& what) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t t = static_cast<int64_t>(target[i]);
    if (has_ignore && t == ignore_index) continue;
    if (t < 0 || t >= c) {
      throw InvalidArgumentError(what + ": target value " + std::to_string(t) + " is out of range [0, " +
                                 std::to_string(c) + ")");
    }
  }
}

// Log-softmax over the classes of one batch entry s [C, D], for the columns [j0, j1), in double:
// logp[k * ld + (j - j0)] = s[k, j] - (max_k s[k, j] + log(sum_k exp(s[k, j] - max))).
template <typename T>
void LogSoftmaxColumns(const T* s, int64_t c, int64_t d, int64_t j0, int64_t j1, double* logp, int64_t ld) {
  auto at = [&](int64_t k, int64_t j) { return static_cast<double>(static_cast<Acc<T>>(s[k * d + j])); };
  for (int64_t j = j0; j < j1; ++j) {
    double mx = -INFINITY;
    for (int64_t k = 0; k < c; ++k) mx = std::max(mx, at(k, j));
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(at(k, j) - mx);
    const double lse = mx + std::log(sum);
    for (int64_t k = 0; k < c; ++k) logp[k * ld + (j - j0)] = at(k, j) - lse;
  }
}

// The loss of `count` consecutive positions of one batch entry: position p has target[p] (checked by
// CheckLossTargets), log-probabilities lp[k * cstride + p] over the classes k and weight w[target[p]] (1 when w is
// null). Calls store(p, loss) for every position (0 where the target is ignored) and adds the losses to `sum` and
// the applied weights to `weight_sum`.
template <typename L, typename TInd, typename Store>
void LossColumns(const L* lp, int64_t cstride, const TInd* target, const double* w, int64_t count, bool has_ignore,
                 int64_t ignore_index, Store&& store, double& sum, double& weight_sum) {
  for (int64_t p = 0; p < count; ++p) {
    const int64_t t = static_cast<int64_t>(target[p]);
    if (has_ignore && t == ignore_index) {
      store(p, 0.0);
      continue;
    }
    const double wt = w ? w[t] : 1.0;
    const double v = -static_cast<double>(static_cast<Acc<L>>(lp[t * cstride + p])) * wt;
    store(p, v);
    sum += v;
    weight_sum += wt;
  }
}

// The reduced loss: the sum, or for "mean" the sum over the applied weights (0/0 = NaN when every target is
// ignored).
inline double ReduceLoss(LossReduction reduction, double sum, double weight_sum) {
  return reduction == LossReduction::kMean ? sum / weight_sum : sum;
}

// A weight tensor's values in double (empty when absent).
template <typename T>
std::vector<double> LossWeights(const Tensor* weight) {
  std::vector<double> w;
  if (!weight) return w;
  w.resize(static_cast<size_t>(weight->size()));
  for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<double>(static_cast<Acc<T>>(weight->data<T>()[k]));
  return w;
}

}  // namespace ferry::ref
