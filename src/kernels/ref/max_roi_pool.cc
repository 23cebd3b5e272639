// MaxRoiPool: for each region of interest (batch_index, x1, y1, x2, y2), scaled by spatial_scale and rounded,
// max-pools every channel over a pooled_shape grid of bins (Caffe's ROI pooling); empty bins give 0. A batch index
// outside X is the rois' data: Compute reports it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class MaxRoiPool : public OpKernel {
 public:
  explicit MaxRoiPool(const ir::Node& node)
      : pooled_(node.GetInts("pooled_shape")), spatial_scale_(node.GetFloat("spatial_scale", 1.0f)) {
    if (pooled_.size() != 2 || pooled_[0] < 1 || pooled_[1] < 1) {
      throw InvalidModelError(node.Describe() + ": pooled_shape must be two positive values");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& rois = ctx.tensor_input(1);
    if (x.shape.size() != 4) {
      throw InvalidArgumentError(ctx.Describe() + ": X must be 4-D [N, C, H, W], got " + ShapeToString(x.shape) +
                                 " (" + ctx.InputString(0) + ")");
    }
    if (rois.shape.size() != 2 || rois.shape[1] != 5 || rois.dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": rois must be [num_rois, 5] of X's type, got " +
                                 ShapeToString(rois.shape) + " (" + ctx.InputString(1) + ")");
    }
    ctx.SetOutput(0, x.dtype, {rois.shape[0], x.shape[1], pooled_[0], pooled_[1]});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    const int64_t n = x.dim(0), channels = x.dim(1), h = x.dim(2), w = x.dim(3);
    const int64_t ph = pooled_[0], pw = pooled_[1], num = rois.dim(0);
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xp = x.data<T>();
      const T* rp = rois.data<T>();
      T* yp = y.data<T>();
      for (int64_t r = 0; r < num; ++r) {
        const double bd = static_cast<double>(rp[r * 5]);
        if (!(bd >= 0) || bd >= static_cast<double>(n)) {
          throw InvalidArgumentError(ctx.Describe() + ": roi " + std::to_string(r) + " has batch index " +
                                     std::to_string(bd) + " outside [0, " + std::to_string(n) + ")");
        }
      }
      ParallelFor(ctx.threads(), num * channels, 4, [&](int64_t begin, int64_t end) {
        for (int64_t rc = begin; rc < end; ++rc) {
          const int64_t r = rc / channels, c = rc % channels;
          const T* roi = rp + r * 5;
          const int64_t b = static_cast<int64_t>(static_cast<double>(roi[0]));
          auto scaled = [&](int i) {
            const double v = std::round(static_cast<double>(roi[i]) * spatial_scale_);
            return static_cast<int64_t>(std::isnan(v) ? 0.0 : std::clamp(v, -1e15, 1e15));
          };
          const int64_t x1 = scaled(1), y1 = scaled(2), x2 = scaled(3), y2 = scaled(4);
          const int64_t roi_h = std::max<int64_t>(y2 - y1 + 1, 1), roi_w = std::max<int64_t>(x2 - x1 + 1, 1);
          const double bin_h = static_cast<double>(roi_h) / static_cast<double>(ph);
          const double bin_w = static_cast<double>(roi_w) / static_cast<double>(pw);
          const T* plane = xp + (b * channels + c) * h * w;
          T* out = yp + rc * ph * pw;
          for (int64_t i = 0; i < ph; ++i) {
            const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(i * bin_h)) + y1, 0, h);
            const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((i + 1) * bin_h)) + y1, 0, h);
            for (int64_t j = 0; j < pw; ++j) {
              const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(j * bin_w)) + x1, 0, w);
              const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((j + 1) * bin_w)) + x1, 0, w);
              A best = 0;
              if (he > hs && we > ws) {
                best = -std::numeric_limits<A>::infinity();
                for (int64_t yy = hs; yy < he; ++yy)
                  for (int64_t xx = ws; xx < we; ++xx) best = std::max(best, static_cast<A>(plane[yy * w + xx]));
              }
              out[i * pw + j] = T(best);
            }
          }
        }
      });
    });
  }

 private:
  std::vector<int64_t> pooled_;
  float spatial_scale_;
};

}  // namespace

void RegisterMaxRoiPoolKernels(KernelRegistry& r) {
  r.Add({.op = "MaxRoiPool", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<MaxRoiPool>});
}

}  // namespace ferry::ref
