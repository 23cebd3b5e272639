// Random cases of the loss ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) for the cpu kernels' tests:
// input [N, C, d1..dk] and targets [N, d1..dk] holding the ignored index now and then, weights or none, every
// reduction.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {

// One random loss case: `rank` >= 2 dims of input, C classes; ignore_index (when `has_ignore`) is `ignore`, and
// about one target in five holds it.
struct LossCase {
  DataType dtype = DataType::kFloat;
  DataType target_dtype = DataType::kInt64;
  Shape input;
  bool weight = false;
  std::string reduction = "mean";
  bool has_ignore = false;
  int64_t ignore = 0;
  int threads = 1;
};

inline Tensor LossTargets(const LossCase& c, std::mt19937& rng) {
  Shape ts = {c.input[0]};
  for (size_t i = 2; i < c.input.size(); ++i) ts.push_back(c.input[i]);
  Tensor t(c.target_dtype, ts);
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t v = c.has_ignore && Pick(rng, 0, 4) == 0 ? c.ignore : Pick(rng, 0, c.input[1] - 1);
    if (c.target_dtype == DataType::kInt64) {
      t.data<int64_t>()[i] = v;
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

// The OpTest of `c` for `op` at `opset` (float16: rtol 1e-3, the sums of other orders round apart).
inline OpTest LossTest(const std::string& op, int64_t opset, const LossCase& c, std::mt19937& rng,
                       bool edges = false, int outputs = 1) {
  OpTest t{.op = op, .opset = opset, .num_outputs = outputs, .threads = c.threads};
  t.inputs.push_back(In("x", RandomTensor(c.dtype, c.input, rng, -3, 3, edges)));
  t.inputs.push_back(In("target", LossTargets(c, rng)));
  if (c.weight) t.inputs.push_back(In("weight", RandomTensor(c.dtype, {c.input[1]}, rng, 0.1, 2)));
  t.attributes.push_back(Str("reduction", c.reduction));
  if (c.has_ignore) t.attributes.push_back(Int("ignore_index", c.ignore));
  if (c.dtype == DataType::kFloat16) t.rtol = 1e-3, t.atol = 1e-3;
  return t;
}

// A random case: rank 2..5, small dims, any reduction, weights, ignore_index (negative too) and dtype of `types`.
inline LossCase RandomLossCase(std::mt19937& rng, const std::vector<DataType>& types, int i) {
  LossCase c;
  c.dtype = types[static_cast<size_t>(i) % types.size()];
  c.target_dtype = i % 3 ? DataType::kInt64 : DataType::kInt32;
  const int64_t rank = Pick(rng, 2, 5);
  c.input = {Pick(rng, 1, 6), Pick(rng, 1, 12)};
  for (int64_t d = 2; d < rank; ++d) c.input.push_back(Pick(rng, 1, rank <= 3 ? 20 : 5));
  c.weight = Pick(rng, 0, 1) != 0;
  c.reduction = std::vector<std::string>{"none", "sum", "mean"}[static_cast<size_t>(i % 3)];
  c.has_ignore = Pick(rng, 0, 2) != 0;
  c.ignore = Pick(rng, 0, 1) ? -Pick(rng, 1, 100) : Pick(rng, 0, c.input[1] - 1);
  c.threads = 1 + i % 2;
  return c;
}

}  // namespace ferry::testing
