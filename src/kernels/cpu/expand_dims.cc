// com.microsoft::ExpandDims on cpu: ref's Unsqueeze kernel registered under a cpu name (no copy of its code): Y is a
// view of X, it copies nothing. The types are its schema's; the axis input is read on the host. (Unique: unique.cc.)
#include "kernels/kernel_def.h"
#include "kernels/ref/ms_types.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::cpu {

void RegisterExpandDimsKernels(KernelRegistry& r) {
  r.Add({.op = "ExpandDims",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", ref::MsAllTensorTypes()}},
         .create = ref::CreateUnsqueezeKernel,
         .host_inputs = {1},
         .name = "cpu.com.microsoft.any_expanddims__view.1"});
}

}  // namespace ferry::cpu
