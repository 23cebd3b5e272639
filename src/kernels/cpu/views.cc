// Reshape, Flatten, Squeeze, Unsqueeze, Identity and inference Dropout on cpu: ops that only change the shape. The
// output is a view sharing the input's buffer, so ref's kernels are already as fast as these ops get; the cpu backend
// registers those very kernels (no copy of their code) under cpu names, for every data type, strings included. Shape
// and axes inputs are read on the host; the kernels' Prepare declares the output a view of input 0 (with its shape when
// the shape or axes are known before the run), so it gets no buffer of its own.
#include <optional>
#include <string>

#include "ir/value_query.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Dropout in inference: every opset before 12; from 12, when training_mode is absent or a constant false (what
// exporters write in eval mode; the optimizer also removes such a node when its mask is not read). Training mode
// draws a mask, which only ref implements.
std::string InferenceDropout(const ir::Node& node) {
  if (node.opset() < 12 || node.num_inputs() < 3 || !node.input(2)) return "";
  const std::optional<Tensor> t = ir::ConstantValue(node.input(2));
  if (t && t->dtype() == DataType::kBool && t->size() == 1 && !t->data<bool>()[0]) return "";
  return "Dropout: training mode (a training_mode input that is not a constant false) is not implemented on cpu";
}

}  // namespace

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
  const std::vector<DataType> legacy = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  r.Add({.op = "Dropout", .since = 1, .until = 11, .types = {{"T", legacy}, {"T1", {DataType::kBool}}},
         .create = ref::CreateDropoutKernel, .name = "cpu.any_dropout__view.1"});
  r.Add({.op = "Dropout", .since = 12,
         .types = {{"T", dtypes::Floats()}, {"T1", dtypes::Floats()}, {"T2", {DataType::kBool}}},
         .create = ref::CreateDropoutKernel, .predicate = InferenceDropout, .name = "cpu.any_dropout__view.12",
         .constraints = "inference only (training_mode absent or a constant false)"});
}

}  // namespace ferry::cpu
