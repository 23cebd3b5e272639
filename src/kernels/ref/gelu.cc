// Gelu (opset 20): approximate="none": 0.5 x (1 + erf(x / sqrt 2)); "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/gelu.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct GeluOp {
  bool tanh_approx;
  explicit GeluOp(const ir::Node& n) {
    std::string mode = n.GetString("approximate", "none");
    if (mode != "none" && mode != "tanh") {
      throw InvalidModelError(n.Describe() + ": Gelu approximate must be \"none\" or \"tanh\", got \"" + mode + "\"");
    }
    tanh_approx = mode == "tanh";
  }
  template <typename T>
  T operator()(T v) const {
    return ViaAcc(v, [&](auto x) -> decltype(x) { return tanh_approx ? GeluTanh(x) : GeluErf(x); });
  }
};

}  // namespace

void RegisterGeluKernels(KernelRegistry& r) {
  r.Add({.op = "Gelu", .since = 20, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<UnaryKernel<GeluOp, FloatTypes>>});
  // ai.ferry::Gelu (what the fuse_gelu pass produces from the erf / tanh formula at any opset): the same op.
  r.Add({.op = "Gelu", .domain = "ai.ferry", .since = 1, .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<UnaryKernel<GeluOp, FloatTypes>>});
  // com.microsoft::Gelu (ONNX Runtime's contrib op, the erf form; it has no `approximate`): the same op.
  r.Add({.op = "Gelu", .domain = "com.microsoft", .since = 1, .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<UnaryKernel<GeluOp, FloatTypes>>});
}

}  // namespace ferry::ref
