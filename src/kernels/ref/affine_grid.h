// AffineGrid's ref kernel, which the cpu backend registers too (src/kernels/cpu/affine_grid.cc): the op writes
// each grid point once from a 2x3 / 3x4 matrix and precomputed base coordinates, threaded over the points, so
// ref's kernel is already as fast as the op gets and the cpu backend keeps no copy of it.
#pragma once

#include <memory>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

std::unique_ptr<OpKernel> CreateAffineGridKernel(const ir::Node& node, const KernelOptions& options);

}  // namespace ferry::ref
