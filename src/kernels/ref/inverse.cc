// com.microsoft::Inverse (ONNX Runtime's contrib op): Y[..., :, :] = X[..., :, :]^-1 for every square matrix of the
// batch; X is [*, M, M] (rank >= 2), Y has its shape and type (float16, float, double: what ONNX Runtime's CPU
// kernel registers). Each matrix is inverted by Gauss-Jordan elimination with partial pivoting (the row of the
// largest |pivot| below the diagonal; the first on ties), in double, and rounded to the type once at the end. A
// singular matrix is not an error: its zero pivot divides, and Y holds inf or NaN (as ONNX Runtime's Eigen inverse
// gives), exactly where depends on the elimination. An empty batch or M = 0 gives an empty Y.
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/inverse.h"
#include "kernels/registry.h"

namespace ferry::ref {

void CheckInverseInput(const PrepareContext& ctx) {
  const InputSpec& x = ctx.tensor_input(0);
  const size_t r = x.shape.size();
  if (r < 2 || x.shape[r - 1] != x.shape[r - 2]) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be [*, M, M] (square matrices, rank >= 2), got " +
                               ctx.InputString(0));
  }
}

namespace {

// In place: a (n x n, row-major) becomes its inverse. Gauss-Jordan with partial pivoting; the row swaps are undone
// as column swaps at the end.
void InvertInPlace(double* a, int64_t n, std::vector<int64_t>& pivots) {
  pivots.assign(static_cast<size_t>(n), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    }
    pivots[static_cast<size_t>(k)] = p;
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
    }
    double* row_k = a + k * n;
    const double inv = 1.0 / row_k[k];
    row_k[k] = 1.0;
    for (int64_t j = 0; j < n; ++j) row_k[j] *= inv;
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      double* row_i = a + i * n;
      const double f = row_i[k];
      row_i[k] = 0.0;
      for (int64_t j = 0; j < n; ++j) row_i[j] -= f * row_k[j];
    }
  }
  for (int64_t k = n; k-- > 0;) {
    const int64_t p = pivots[static_cast<size_t>(k)];
    if (p == k) continue;
    for (int64_t i = 0; i < n; ++i) std::swap(a[i * n + k], a[i * n + p]);
  }
}

class Inverse : public OpKernel {
 public:
  explicit Inverse(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    CheckInverseInput(ctx);
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t n = x.dim(x.rank() - 1), mats = x.size() / (n * n);
    Dispatch(TypeList<float, double, Float16>{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> a(static_cast<size_t>(n * n));
      std::vector<int64_t> pivots;
      for (int64_t m = 0; m < mats; ++m) {
        for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = static_cast<double>(Acc<T>(in[m * n * n + i]));
        InvertInPlace(a.data(), n, pivots);
        for (int64_t i = 0; i < n * n; ++i) {
          out[m * n * n + i] = static_cast<T>(static_cast<Acc<T>>(a[static_cast<size_t>(i)]));
        }
      }
    });
  }
};

}  // namespace

void RegisterInverseKernels(KernelRegistry& r) {
  r.Add({.op = "Inverse",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat16, DataType::kFloat, DataType::kDouble}}},
         .create = MakeKernel<Inverse>});
}

}  // namespace ferry::ref
