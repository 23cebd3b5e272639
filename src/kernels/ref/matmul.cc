// MatMul: numpy-style batched matrix product (1-D operands promoted, batch dims broadcast). float runs GemmF32
// (one GEMM when B is shared across the batch, else per matrix, parallel over matrices when they are small);
// float16/bfloat16 compute through float; double and integers use the plain loop.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "semantics/matmul.h"

namespace ferry::ref {

MatMulPlan PlanMatMul(const Shape& a, const Shape& b, const std::string& what) {
  const semantics::MatMulShape s = semantics::ResolveMatMul(a, b, what);
  MatMulPlan p;
  p.m = s.m;
  p.k = s.k;
  p.n = s.n;
  const Shape& batch_a = s.batch_a;
  const Shape& batch_b = s.batch_b;
  const Shape& batch = s.batch;
  p.out_shape = s.y_shape;
  p.b_shared = std::all_of(batch_b.begin(), batch_b.end(), [](int64_t d) { return d == 1; });
  const int64_t count = ShapeElementCount(batch);
  p.a_offsets.reserve(static_cast<size_t>(count));
  p.b_offsets.reserve(static_cast<size_t>(count));
  if (batch.empty()) {
    p.a_offsets.push_back(0);
    p.b_offsets.push_back(0);
  } else {
    BroadcastIterator it(batch, {batch_a, batch_b});
    it.ForEach([&](int64_t, const int64_t* offs) {
      p.a_offsets.push_back(offs[0] * p.m * p.k);
      p.b_offsets.push_back(offs[1] * p.k * p.n);
    });
  }
  return p;
}

namespace {

// Many small products: one GemmF32 per matrix, the matrices split over the threads.
bool AcrossBatches(const MatMulPlan& p, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  return threads > 1 && batches >= 2 * threads && flops < 5e7;
}

}  // namespace

void AddMatMulF32Workspace(const MatMulPlan& p, int threads, Workspace& ws) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  if (batches == 0 || p.m == 0 || p.n == 0) return;
  if (p.b_shared) {
    AddGemmF32Workspace(batches * p.m, p.n, p.k, threads, ws);
  } else if (AcrossBatches(p, threads)) {  // ParallelFor's team, each thread running single-threaded products
    AddGemmF32Workspace(p.m, p.n, p.k, 1, ws, static_cast<int>(std::min<int64_t>(threads, batches)));
  } else {
    AddGemmF32Workspace(p.m, p.n, p.k, threads, ws);
  }
}

void MatMulF32(const MatMulPlan& p, const float* a, const float* b, float* y, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  if (batches == 0 || p.m == 0 || p.n == 0) return;
  if (p.b_shared) {
    GemmF32(false, false, batches * p.m, p.n, p.k, 1.0f, a, p.k, b, p.n, 0.0f, y, p.n, threads);
    return;
  }
  if (AcrossBatches(p, threads)) {
    ParallelFor(threads, batches, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        GemmF32(false, false, p.m, p.n, p.k, 1.0f, a + p.a_offsets[static_cast<size_t>(i)], p.k,
                b + p.b_offsets[static_cast<size_t>(i)], p.n, 0.0f, y + i * p.m * p.n, p.n, 1);
      }
    });
    return;
  }
  for (int64_t i = 0; i < batches; ++i) {
    GemmF32(false, false, p.m, p.n, p.k, 1.0f, a + p.a_offsets[static_cast<size_t>(i)], p.k,
            b + p.b_offsets[static_cast<size_t>(i)], p.n, 0.0f, y + i * p.m * p.n, p.n, threads);
  }
}

namespace {

template <typename T>
void MatMulSimple(const MatMulPlan& p, const T* a, const T* b, T* y, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, p.n * p.k));
  ParallelFor(threads, batches * p.m, min_rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end;) {
      const int64_t i = r / p.m, row = r % p.m;
      const int64_t rows = std::min(end - r, p.m - row);
      GemmSimple(false, false, rows, p.n, p.k, a + p.a_offsets[static_cast<size_t>(i)] + row * p.k, p.k,
                 b + p.b_offsets[static_cast<size_t>(i)], p.n, false, y + r * p.n, p.n);
      r += rows;
    }
  });
}

class MatMul : public OpKernel {
 public:
  explicit MatMul(const ir::Node&) {}

  // The product's geometry for these shapes, and GemmF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != b.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": A and B have different element types (" + ctx.InputString(0) +
                                 ", " + ctx.InputString(1) + ")");
    }
    const MatMulPlan& p = ctx.EmplaceState(PlanMatMul(a.shape, b.shape, ctx.Describe()));
    if (GemmsAsFloat(a.dtype)) AddMatMulF32Workspace(p, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, a.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const MatMulPlan& p = ctx.state<MatMulPlan>();
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    Dispatch(NumericTypes{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float>) {
        MatMulF32(p, a.data<float>(), b.data<float>(), y.data<float>(), ctx.threads());
      } else if constexpr (kIsHalf<T>) {
        const std::vector<float> af = ToFloatVector(a.data<T>(), a.size());
        const std::vector<float> bf = ToFloatVector(b.data<T>(), b.size());
        std::vector<float> yf(static_cast<size_t>(y.size()));
        MatMulF32(p, af.data(), bf.data(), yf.data(), ctx.threads());
        FromFloatVector(yf, y.data<T>());
      } else {
        MatMulSimple(p, a.data<T>(), b.data<T>(), y.data<T>(), ctx.threads());
      }
    });
  }
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  using D = DataType;
  r.Add({.op = "MatMul",
         .since = 1,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), {D::kInt32, D::kInt64, D::kUint32, D::kUint64})}},
         .create = MakeKernel<MatMul>});
}

}  // namespace ferry::ref
