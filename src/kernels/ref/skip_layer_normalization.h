// The skip normalizations: ai.ferry SkipLayerNormalization (schemas_ferry.cc) and ONNX Runtime's com.microsoft
// SkipLayerNormalization and SkipSimplifiedLayerNormalization (schemas_com_microsoft_transformer.cc). The form of
// each (where its inputs and outputs sit) and the input checks both backends share, so that the ref and cpu
// kernels accept exactly the same inputs and name the same input in their errors.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/tensor.h"

namespace ferry {
class PrepareContext;
namespace ir {
class Node;
}  // namespace ir
}  // namespace ferry

namespace ferry::ref {

// Input and output positions (-1: the op has none). ai.ferry: (X, Skip, gamma, beta?) -> (Y, Sum?) over [axis,
// rank). com.microsoft SkipLayerNormalization: (input, skip, gamma, beta?, bias?) -> (output, mean?, inv_std_var?,
// input_skip_bias_sum?); SkipSimplifiedLayerNormalization: (input, skip, gamma, bias?) -> the same outputs, RMS
// (no mean subtracted, no beta; its mean output is 0). Both over the last dim.
struct SkipNormForm {
  bool simplified = false;
  int beta = 3, bias = -1;           // inputs
  int mean = -1, inv = -1, sum = 1;  // outputs
  float default_epsilon = 1e-5f;
  const char* x_name = "X";  // the first two inputs' names, for the errors
  const char* skip_name = "Skip";
};
SkipNormForm SkipNormFormOf(const ir::Node& node);

struct SkipLayerNormShape {
  int64_t rows = 0;       // prod(X.shape[:axis])
  int64_t n = 0;          // prod(X.shape[axis:]): the normalized length of each row
  int64_t skip_size = 0;  // elements of Skip: element i of X adds Skip's element i % skip_size
};

// Checks X, Skip, gamma, beta and bias (one floating-point type; X of rank >= 1; Skip of X's shape or of X's
// trailing dims after leading 1s; gamma, beta and bias of n elements) and `axis`; throws InvalidArgumentError
// naming `what` and the input.
SkipLayerNormShape CheckSkipLayerNorm(const Tensor& x, const Tensor& skip, const Tensor& gamma, const Tensor* beta,
                                      const Tensor* bias, int64_t axis, const SkipNormForm& form,
                                      const std::string& what);

// Both backends' Prepare: CheckSkipLayerNorm on the inputs' specs, its shape kept as the state; Y and the sum of
// X's dtype and shape, the statistics (mean, inv_std_var) float32 of X's shape with the normalized dims 1, each
// when requested (an omitted output is dynamic: Compute does not write it).
void PrepareSkipLayerNorm(PrepareContext& ctx, const SkipNormForm& form, int64_t axis);

}  // namespace ferry::ref
