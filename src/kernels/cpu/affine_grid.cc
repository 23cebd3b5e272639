// AffineGrid (opset 20) on the cpu backend: 2-D (theta [N, 2, 3]) and 3-D (theta [N, 3, 4]) grids, align_corners
// either way, size known before the run or not. The op writes each grid point once from the matrix and
// precomputed base coordinates, threaded over the points: ref's kernel is already as fast as the op gets, so the
// cpu backend registers that very kernel (ref/affine_grid.h; no copy of its code), as views.cc does.
#include "kernels/ref/affine_grid.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {

void RegisterAffineGridKernels(KernelRegistry& r) {
  r.Add({.op = "AffineGrid",
         .since = 20,
         .types = {{"T1", dtypes::Floats()}, {"T2", {DataType::kInt64}}},
         .create = ref::CreateAffineGridKernel,
         .host_inputs = {1},
         .name = "cpu.any_affinegrid__ref.20"});
}

}  // namespace ferry::cpu
