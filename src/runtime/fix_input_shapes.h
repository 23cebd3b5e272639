// Fixing the shapes of a model's graph inputs before type inference (`ferry optimize --shape NAME=DIMS`): the
// given dims replace symbolic and unknown ones, so inference (and the passes after it) see static shapes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry::runtime {

// For each NAME -> dims: the top graph's input NAME (an input the caller feeds, not an initializer) becomes a
// tensor of exactly those dims. A symbolic dim the input had ("batch") is bound to its new value in every
// other input and output of the top graph too (ONNX: one symbol, one value), unless that value is given there.
// Throws InvalidArgumentError naming the input, expected vs got, for: a name that is no such input (listing
// them), a negative dim, a non-tensor input, a rank that differs from the declared one, a static dim that
// differs from the declared one, or a symbol given two values. The model is left unchanged when it throws.
void FixInputShapes(ir::Model& model, const std::map<std::string, std::vector<int64_t>>& shapes);

}  // namespace ferry::runtime
