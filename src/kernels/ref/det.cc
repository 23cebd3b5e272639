// Det (opsets 11, 22): determinants of the trailing [M, M] matrices of a [*, M, M] input, by LU decomposition
// with partial pivoting in double precision. Output shape [*].
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

double LuDeterminant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::abs(a[static_cast<size_t>(r * m + c)]) > std::abs(a[static_cast<size_t>(piv * m + c)])) piv = r;
    const double p = a[static_cast<size_t>(piv * m + c)];
    if (p == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[static_cast<size_t>(c * m + k)], a[static_cast<size_t>(piv * m + k)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[static_cast<size_t>(r * m + c)] / p;
      if (f == 0.0) continue;
      for (int64_t k = c + 1; k < m; ++k) a[static_cast<size_t>(r * m + k)] -= f * a[static_cast<size_t>(c * m + k)];
    }
  }
  return det;
}

class Det : public OpKernel {
 public:
  explicit Det(const ir::Node&) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const size_t rank = x.shape.size();
    if (rank < 2 || x.shape[rank - 1] != x.shape[rank - 2]) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have shape [*, M, M], got " + ShapeToString(x.shape));
    }
    ctx.SetOutput(0, x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t m = x.dim(x.rank() - 1);
    Tensor& y = ctx.Output(0);
    const int64_t batch = y.size();
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> a(static_cast<size_t>(m * m));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t k = 0; k < m * m; ++k)
          a[static_cast<size_t>(k)] = static_cast<double>(static_cast<Acc<T>>(in[b * m * m + k]));
        out[b] = T(static_cast<Acc<T>>(LuDeterminant(a, m)));
      }
    });
  }
};

}  // namespace

void RegisterDetKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Det", .since = 11, .until = 21, .types = {{"T", f}}, .create = MakeKernel<Det>});
  r.Add({.op = "Det", .since = 22, .types = {{"T", dtypes::Concat(f, {DataType::kBFloat16})}}, .create = MakeKernel<Det>});
}

}  // namespace ferry::ref
