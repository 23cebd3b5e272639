// The factory of ref's Unique kernel (ai.onnx Unique-11 and com.microsoft::Unique-1, unique.cc), for backends that
// register it under their own names (its sort is already the whole of the op's work).
#pragma once

#include <memory>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

std::unique_ptr<OpKernel> CreateUniqueKernel(const ir::Node& node, const KernelOptions& options);

}  // namespace ferry::ref
