// The ref kernels of the ops that only change a shape (the output shares the input's buffer): Reshape, Flatten,
// Squeeze, Unsqueeze, Identity. They copy nothing, so they are already as fast as a kernel can be; the cpu
// backend registers these same kernels (src/kernels/cpu/views.cc) instead of keeping copies.
#pragma once

#include <memory>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

std::unique_ptr<OpKernel> CreateReshapeKernel(const ir::Node& node);
std::unique_ptr<OpKernel> CreateFlattenKernel(const ir::Node& node);
std::unique_ptr<OpKernel> CreateSqueezeKernel(const ir::Node& node);
std::unique_ptr<OpKernel> CreateUnsqueezeKernel(const ir::Node& node);
std::unique_ptr<OpKernel> CreateIdentityKernel(const ir::Node& node);

}  // namespace ferry::ref
