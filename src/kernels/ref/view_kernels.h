// The ref kernels of the ops that only change a shape (the output shares the input's buffer): Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, and Dropout in inference (Y is X; its training mode draws a mask). They copy nothing,
// so they are already as fast as a kernel can be; the cpu backend registers these same kernels
// (src/kernels/cpu/views.cc) instead of keeping copies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

std::unique_ptr<OpKernel> CreateReshapeKernel(const ir::Node& node, const KernelOptions&);
std::unique_ptr<OpKernel> CreateFlattenKernel(const ir::Node& node, const KernelOptions&);
std::unique_ptr<OpKernel> CreateSqueezeKernel(const ir::Node& node, const KernelOptions&);
std::unique_ptr<OpKernel> CreateUnsqueezeKernel(const ir::Node& node, const KernelOptions&);
std::unique_ptr<OpKernel> CreateIdentityKernel(const ir::Node& node, const KernelOptions&);
std::unique_ptr<OpKernel> CreateDropoutKernel(const ir::Node& node, const KernelOptions&);

// Squeeze's and Unsqueeze's Prepare from opset 13 (defined in squeeze.cc): checks their axes input 1 (1-D, int32 or
// int64) and returns its values when they are known before the run, std::nullopt when only the run will tell.
// Throws InvalidModelError when the input is absent.
std::optional<std::vector<int64_t>> PrepareAxesInput(const PrepareContext& ctx);

}  // namespace ferry::ref
