// com.microsoft.nchwc Upsample on cpu: the ref kernel itself (kernels/ref/nchwc.cc), registered under a cpu name. It
// already works on the blocked layout directly, one output row of b contiguous lanes at a time (nearest: block
// copies; linear: four fused multiply-adds per lane the compiler vectorizes), split over the threads by rows, so a
// cpu copy of it would be the same code.
#include "kernels/ref/nchwc.h"
#include "kernels/registry.h"

namespace ferry::cpu {

void RegisterNchwcUpsampleKernels(KernelRegistry& r) { ref::RegisterNchwcUpsampleKernels(r); }

}  // namespace ferry::cpu
