// Reshape, Flatten, Squeeze, Unsqueeze, Identity on cpu: ops that only change the shape. The output is a view
// sharing the input's buffer, so ref's kernels are already as fast as these ops get; the cpu backend registers
// those very kernels (no copy of their code) under cpu names, for every data type, strings included. Shape and
// axes inputs are read on the host; the kernels' Prepare declares the output a view of input 0 (with its shape when
// the shape or axes are known before the run), so it gets no buffer of its own.
#include "kernels/kernel_def.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::cpu {

void RegisterViewKernels(KernelRegistry& r) {
  const std::vector<DataType> all = dtypes::All();
  r.Add({.op = "Reshape", .since = 1, .until = 4, .types = {{"T", all}}, .create = ref::CreateReshapeKernel,
         .name = "cpu.any_reshape__view.1"});
  r.Add({.op = "Reshape", .since = 5, .types = {{"T", all}}, .create = ref::CreateReshapeKernel, .host_inputs = {1},
         .name = "cpu.any_reshape__view.5"});
  r.Add({.op = "Flatten", .since = 1, .types = {{"T", all}}, .create = ref::CreateFlattenKernel,
         .name = "cpu.any_flatten__view.1"});
  r.Add({.op = "Squeeze", .since = 1, .until = 12, .types = {{"T", all}}, .create = ref::CreateSqueezeKernel,
         .name = "cpu.any_squeeze__view.1"});
  r.Add({.op = "Squeeze", .since = 13, .types = {{"T", all}}, .create = ref::CreateSqueezeKernel, .host_inputs = {1},
         .name = "cpu.any_squeeze__view.13"});
  r.Add({.op = "Unsqueeze", .since = 1, .until = 12, .types = {{"T", all}}, .create = ref::CreateUnsqueezeKernel,
         .name = "cpu.any_unsqueeze__view.1"});
  r.Add({.op = "Unsqueeze", .since = 13, .types = {{"T", all}}, .create = ref::CreateUnsqueezeKernel,
         .host_inputs = {1}, .name = "cpu.any_unsqueeze__view.13"});
  r.Add({.op = "Identity", .since = 1, .types = {{"T", all}, {"V", all}}, .create = ref::CreateIdentityKernel,
         .name = "cpu.any_identity__view.1"});
}

}  // namespace ferry::cpu
