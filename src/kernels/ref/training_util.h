// Shared by the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum): their inputs are R (scalar
// learning rate), T (scalar int64 step count), then `groups` variadic blocks of n tensors each
// (X1..Xn, G1..Gn, ...); outputs are the updated blocks in the same order. Math is done in double.
#pragma once

#include <string>
#include <vector>

#include "kernels/ref/common.h"

namespace ferry::ref {

struct OptimizerArgs {
  double r = 0;
  int64_t t = 0;
  int64_t n = 0;  // tensors per block
};

inline OptimizerArgs ReadOptimizerArgs(const KernelContext& ctx, int blocks) {
  const std::string what = ctx.Describe();
  const Tensor& r = ctx.required_input(0);
  const Tensor& t = ctx.required_input(1);
  if (r.size() != 1 || t.size() != 1) throw InvalidArgumentError(what + ": R and T must be scalars");
  if (t.dtype() != DataType::kInt64) throw InvalidArgumentError(what + ": T must be int64");
  OptimizerArgs a;
  Dispatch(TypeList<float, double>{}, r.dtype(), what, [&](auto tag) { a.r = static_cast<double>(r.data<decltype(tag)>()[0]); });
  a.t = t.data<int64_t>()[0];
  const int rest = ctx.input_count() - 2;
  if (rest <= 0 || rest % blocks != 0)
    throw InvalidArgumentError(what + ": expected R, T and " + std::to_string(blocks) + " equally long groups of tensors");
  a.n = rest / blocks;
  for (int i = 0; i < a.n; ++i) {
    const Tensor& x = ctx.required_input(2 + i);
    for (int b = 1; b < blocks; ++b) {
      const Tensor& o = ctx.required_input(2 + b * static_cast<int>(a.n) + i);
      if (o.shape() != x.shape() || o.dtype() != x.dtype())
        throw InvalidArgumentError(what + ": input " + std::to_string(2 + b * a.n + i) + " has shape " +
                                   ShapeToString(o.shape()) + " / type " + std::string(DataTypeName(o.dtype())) +
                                   ", expected those of X" + std::to_string(i + 1) + " " + ShapeToString(x.shape()));
    }
  }
  return a;
}

}  // namespace ferry::ref
