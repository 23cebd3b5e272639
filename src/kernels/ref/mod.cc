// Mod (opset 10, 13): fmod=0 gives the integer remainder with the divisor's sign (Python's %); fmod=1 gives
// C's fmod (the dividend's sign). Floating point inputs require fmod=1 by the spec; fmod=0 on floats is
// accepted and follows Python's float %. A zero integer divisor gives 0.
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct ModOp {
  bool fmod;
  explicit ModOp(const ir::Node& n) : fmod(n.GetInt("fmod", 0) != 0) {}
  template <typename T>
  T operator()(T a, T b) const {
    return fmod ? ModValue<true>(a, b) : ModValue<false>(a, b);
  }
};

}  // namespace

void RegisterModKernels(KernelRegistry& r) {
  r.Add({.op = "Mod", .since = 10, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<BinaryKernel<ModOp, NumericTypes>>});
}

}  // namespace ferry::ref
