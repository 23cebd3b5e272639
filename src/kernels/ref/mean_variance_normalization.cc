// MeanVarianceNormalization (opsets 9, 13): y = (x - mean) / (sqrt(var) + 1e-9), mean and population variance
// taken over `axes` (default [0, 2, 3]), as in the ONNX function body.
#include <cmath>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class MeanVarianceNormalization : public OpKernel {
 public:
  explicit MeanVarianceNormalization(const ir::Node& node) : axes_(node.GetInts("axes", {0, 2, 3})) {}

  // The statistics' layout: per dim, its stride into the statistics array (0 for reduced dims), and their count.
  struct Plan {
    std::vector<int64_t> stat_stride;
    int64_t stats = 1;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
    if (ShapeElementCount(x.shape) == 0) return;  // nothing to normalise: the axes are not resolved
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) reduced[static_cast<size_t>(NormalizeAxis(a, rank, ctx.Describe()))] = true;
    Plan p;
    p.stat_stride.assign(static_cast<size_t>(rank), 0);
    for (int64_t d = rank; d-- > 0;) {
      if (reduced[static_cast<size_t>(d)]) continue;
      p.stat_stride[static_cast<size_t>(d)] = p.stats;
      p.stats *= x.shape[static_cast<size_t>(d)];
    }
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    const int64_t rank = x.rank();
    const Plan& plan = ctx.state<Plan>();
    const std::vector<int64_t>& stat_stride = plan.stat_stride;
    const int64_t stats = plan.stats;
    const double count = static_cast<double>(x.size()) / static_cast<double>(stats);
    // Statistic index of every element, walked once with an odometer.
    std::vector<int64_t> index(static_cast<size_t>(x.size()));
    {
      std::vector<int64_t> ctr(static_cast<size_t>(rank), 0);
      int64_t off = 0;
      for (int64_t i = 0; i < x.size(); ++i) {
        index[static_cast<size_t>(i)] = off;
        for (int64_t d = rank; d-- > 0;) {
          auto du = static_cast<size_t>(d);
          off += stat_stride[du];
          if (++ctr[du] < x.dim(d)) break;
          off -= stat_stride[du] * ctr[du];
          ctr[du] = 0;
        }
      }
    }
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<A> mean(static_cast<size_t>(stats), A(0)), sq(static_cast<size_t>(stats), A(0));
      for (int64_t i = 0; i < x.size(); ++i) {
        const A v = static_cast<A>(in[i]);
        mean[static_cast<size_t>(index[static_cast<size_t>(i)])] += v;
        sq[static_cast<size_t>(index[static_cast<size_t>(i)])] += v * v;
      }
      for (size_t s = 0; s < mean.size(); ++s) {
        mean[s] /= static_cast<A>(count);
        const A var = std::max(A(0), sq[s] / static_cast<A>(count) - mean[s] * mean[s]);
        sq[s] = std::sqrt(var) + static_cast<A>(1e-9);
      }
      for (int64_t i = 0; i < x.size(); ++i) {
        const size_t s = static_cast<size_t>(index[static_cast<size_t>(i)]);
        out[i] = T((static_cast<A>(in[i]) - mean[s]) / sq[s]);
      }
    });
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void RegisterMeanVarianceNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "MeanVarianceNormalization",
         .since = 9,
         .until = 12,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<MeanVarianceNormalization>});
  r.Add({.op = "MeanVarianceNormalization",
         .since = 13,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<MeanVarianceNormalization>});
}

}  // namespace ferry::ref
