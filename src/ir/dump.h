// A readable text form of the IR, one statement per node, used by pass tests and `--dump-ir`:
//
//   graph main (x: float32[N,3,224,224]) -> (y: float32[N,1000]) {
//     %w = initializer float32[64,3,7,7]
//     %c = Conv(%x, %w) {kernel_shape=[7,7], pads=[3,3,3,3], strides=[2,2]}   # conv1, opset 17
//     ...
//   }
#pragma once

#include <string>

#include "ir/graph.h"

namespace ferry::ir {

std::string DumpGraph(const Graph& graph, int indent = 0);
std::string DumpModel(const Model& model);

}  // namespace ferry::ir
