// Shared by the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum): their inputs are R (scalar
// learning rate), T (scalar int64 step count), then `groups` variadic blocks of n tensors each
// (X1..Xn, G1..Gn, ...); outputs are the updated blocks in the same order, all but G. Math is done in double.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/ref/common.h"

namespace ferry::ref {

// Prepare's checks of the inputs (R and T scalars, T int64, R float or double, `blocks` equally long groups with
// X's shape and type): returns the tensors per group.
inline int64_t CheckOptimizerInputs(const PrepareContext& ctx, int blocks) {
  const InputSpec& r = ctx.tensor_input(0);
  const InputSpec& t = ctx.tensor_input(1);
  if (ShapeElementCount(r.shape) != 1 || ShapeElementCount(t.shape) != 1) {
    throw InvalidArgumentError(ctx.Describe() + ": R and T must be scalars (" + ctx.InputString(0) + ", " +
                               ctx.InputString(1) + ")");
  }
  if (t.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": T must be int64, got " + ctx.InputString(1));
  }
  if (r.dtype != DataType::kFloat && r.dtype != DataType::kDouble) {
    throw UnsupportedError(ctx.Describe() + ": data type " + std::string(DataTypeName(r.dtype)) + " is not supported");
  }
  const int rest = ctx.input_count() - 2;
  if (rest <= 0 || rest % blocks != 0) {
    throw InvalidArgumentError(ctx.Describe() + ": expected R, T and " + std::to_string(blocks) +
                               " equally long groups of tensors");
  }
  const int n = rest / blocks;
  for (int i = 0; i < n; ++i) {
    const InputSpec& x = ctx.tensor_input(2 + i);
    for (int b = 1; b < blocks; ++b) {
      const int k = 2 + b * n + i;
      const InputSpec& o = ctx.tensor_input(k);
      if (o.shape != x.shape || o.dtype != x.dtype) {
        throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(k) + ", expected the shape and type of X" +
                                   std::to_string(i + 1) + " (" + ctx.InputString(2 + i) + ")");
      }
    }
  }
  return n;
}

// An optimizer's Prepare: CheckOptimizerInputs, then each of the `blocks` - 1 output groups (X_new, then the
// updated state tensors) has the shapes and types of X1..Xn.
inline void PrepareOptimizer(PrepareContext& ctx, int blocks) {
  const int n = static_cast<int>(CheckOptimizerInputs(ctx, blocks));
  for (int i = 0; i < n; ++i) {
    const InputSpec& x = ctx.tensor_input(2 + i);
    for (int g = 0; g + 1 < blocks; ++g) {
      const int o = g * n + i;
      if (o < ctx.output_count()) ctx.SetOutput(o, x.dtype, x.shape);
    }
  }
}

// The learning rate R, float or double (CheckOptimizerInputs checked it).
inline double ReadRate(const Tensor& r) {
  return r.dtype() == DataType::kDouble ? r.data<double>()[0] : static_cast<double>(r.data<float>()[0]);
}

}  // namespace ferry::ref
