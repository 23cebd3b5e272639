// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: reduce every spatial dim of each (image, channel) plane to one
// value; output [N, C, 1, ..., 1]. Planes are reduced in parallel; sums accumulate in double.
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/pool.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class GlobalKind { kAverage, kMax, kLp };

// Reduces `planes` planes of `size` elements (xp) to one value each (yp); planes are split over up to
// `max_threads` threads when the input is large enough.
template <typename T>
void GlobalPoolPlanes(GlobalKind kind, double p, const T* xp, int64_t planes, int64_t size, T* yp, int max_threads) {
  const int threads = planes * size < (1 << 15) ? 1 : max_threads;
  ParallelFor(threads, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t pl = begin; pl < end; ++pl) {
      const T* v = xp + pl * size;
      double r = 0;
      if (kind == GlobalKind::kMax) {
        // NaN propagates (numpy max semantics); an empty plane gives -inf.
        r = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < size; ++i) {
          const double e = static_cast<double>(v[i]);
          if (e > r || std::isnan(e)) r = e;
          if (std::isnan(r)) break;
        }
      } else if (kind == GlobalKind::kAverage) {
        double s[4] = {0, 0, 0, 0};  // independent partial sums: no loop-carried add latency
        int64_t i = 0;
        for (; i + 4 <= size; i += 4)
          for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(v[i + j]);
        for (; i < size; ++i) s[0] += static_cast<double>(v[i]);
        r = ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(size);
      } else {
        for (int64_t i = 0; i < size; ++i) r += std::pow(std::fabs(static_cast<double>(v[i])), p);
        r = std::pow(r, 1.0 / p);
      }
      yp[pl] = T(static_cast<Acc<T>>(r));
    }
  });
}

class GlobalPool : public OpKernel {
 public:
  GlobalPool(const ir::Node& node, GlobalKind kind) : kind_(kind) {
    if (kind == GlobalKind::kLp) {
      const ir::Attribute* a = node.attr("p");  // float in opset 1, int from opset 2
      if (a) p_ = a->type == ir::AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
      if (!(p_ > 0)) throw InvalidModelError(node.Describe() + ": p must be positive");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input X must have rank >= 2 (N, C, spatial...), got shape " +
                                 ShapeToString(x.shape) + " (" + ctx.InputString(0) + ")");
    }
    Shape y_shape(x.shape.size(), 1);
    y_shape[0] = x.shape[0];
    y_shape[1] = x.shape[1];
    ctx.SetOutput(0, x.dtype, std::move(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    const int64_t planes = y.size();
    if (planes == 0) return;
    const int64_t size = x.size() / planes;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      GlobalPoolPlanes(kind_, p_, x.data<T>(), planes, size, y.data<T>(), ctx.threads());
    });
  }

 private:
  GlobalKind kind_;
  double p_ = 2.0;
};

std::unique_ptr<OpKernel> MakeGlobalAverage(const ir::Node& n, const KernelOptions&) {
  return std::make_unique<GlobalPool>(n, GlobalKind::kAverage);
}
std::unique_ptr<OpKernel> MakeGlobalMax(const ir::Node& n, const KernelOptions&) {
  return std::make_unique<GlobalPool>(n, GlobalKind::kMax);
}
std::unique_ptr<OpKernel> MakeGlobalLp(const ir::Node& n, const KernelOptions&) {
  return std::make_unique<GlobalPool>(n, GlobalKind::kLp);
}

}  // namespace

void GlobalMaxPoolF32(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  GlobalPoolPlanes(GlobalKind::kMax, 2.0, x, planes, size, y, threads);
}

void GlobalAveragePoolF32(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  GlobalPoolPlanes(GlobalKind::kAverage, 2.0, x, planes, size, y, threads);
}

void RegisterGlobalPoolKernels(KernelRegistry& r) {
  r.Add({.op = "GlobalAveragePool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeGlobalAverage});
  r.Add({.op = "GlobalMaxPool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeGlobalMax});
  r.Add({.op = "GlobalLpPool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeGlobalLp});
}

}  // namespace ferry::ref
