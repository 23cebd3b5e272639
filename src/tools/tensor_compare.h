// Comparing run-time values against expected ones with ONNX's test rule: floats |a-b| <= atol + rtol*|b|
// (NaN matches NaN, infinities must match), integers, bools and strings exact, dtype and shape exact.
#pragma once

#include <string>

#include "ferry/value.h"

namespace ferry::tools {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Returns "" when `actual` matches `expected`, else a reason naming the first mismatch.
std::string CompareValues(const Value& actual, const Value& expected, const Tolerance& tol);
std::string CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tol);

}  // namespace ferry::tools
