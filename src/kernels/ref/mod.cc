// Mod (opset 10, 13): fmod=0 gives the integer remainder with the divisor's sign (Python's %); fmod=1 gives
// C's fmod (the dividend's sign). Floating point inputs require fmod=1 by the spec; fmod=0 on floats is
// accepted and follows Python's float %. A zero integer divisor gives 0.
#include <cmath>
#include <type_traits>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct ModOp {
  bool fmod;
  explicit ModOp(const ir::Node& n) : fmod(n.GetInt("fmod", 0) != 0) {}
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // avoids INT_MIN % -1
        T r = static_cast<T>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    } else {
      using A = Acc<T>;
      A x = static_cast<A>(a), y = static_cast<A>(b);
      A r = std::fmod(x, y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
      return static_cast<T>(r);
    }
  }
};

}  // namespace

void RegisterModKernels(KernelRegistry& r) {
  r.Add({.op = "Mod", .since = 10, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<BinaryKernel<ModOp, NumericTypes>>});
}

}  // namespace ferry::ref
