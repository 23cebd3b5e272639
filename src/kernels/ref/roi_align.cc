// RoiAlign (opsets 10, 16, 22): pools each region of interest into output_height x output_width bins by
// averaging (mode=avg) or taking the max (mode=max) of bilinear samples, sampling_ratio samples per bin side
// (0: ceil(roi size / bins)). coordinate_transformation_mode (16+, default half_pixel) shifts the roi by -0.5;
// opset 10 behaves as output_half_pixel. Follows the ONNX reference (and ONNX Runtime), including max mode
// taking the max of the weighted corner values of each sample.
#include "kernels/ref/roi_align.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

RoiAlignSample BilinearSample(double y, double x, int64_t height, int64_t width) {
  RoiAlignSample s{};
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) {
    return s;  // outside the feature map (or NaN): contributes 0
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

class RoiAlign : public OpKernel {
 public:
  explicit RoiAlign(const ir::Node& node) : attrs_(ParseRoiAlignAttributes(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    ctx.SetOutput(0, ctx.tensor_input(0).dtype, CheckRoiAlignInputs(ctx, attrs_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    const int64_t num_rois = rois.dim(0);
    const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
    const std::vector<int64_t> batch_idx = RoiAlignBatchIndices(ctx, num_rois, x.dim(0));
    const int64_t bins = attrs_.output_height * attrs_.output_width;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* xd = x.data<T>();
      const T* rd = rois.data<T>();
      T* yd = y.data<T>();
      ParallelFor(ctx.threads(), num_rois, 1, [&](int64_t begin, int64_t end) {
        RoiAlignSamples plan;
        for (int64_t r = begin; r < end; ++r) {
          double roi[4];
          for (int i = 0; i < 4; ++i) roi[i] = static_cast<double>(static_cast<Acc<T>>(rd[r * 4 + i]));
          PlanRoiAlignSamples(attrs_, roi, height, width, plan);
          const T* img = xd + batch_idx[static_cast<size_t>(r)] * channels * height * width;
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = img + c * height * width;
            T* out = yd + (r * channels + c) * bins;
            const RoiAlignSample* s = plan.samples.data();
            for (int64_t bin = 0; bin < bins; ++bin) {
              double acc = 0;
              bool first = true;
              for (int64_t k = 0; k < plan.per_bin; ++k, ++s) {
                double v[4];
                for (int q = 0; q < 4; ++q) v[q] = s->w[q] * static_cast<double>(static_cast<Acc<T>>(plane[s->pos[q]]));
                if (attrs_.max) {
                  const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                } else {
                  acc += v[0] + v[1] + v[2] + v[3];
                }
              }
              if (!attrs_.max) acc /= plan.count;
              out[bin] = T(static_cast<Acc<T>>(acc));
            }
          }
        }
      });
    });
  }

 private:
  RoiAlignAttributes attrs_;
};

}  // namespace

RoiAlignAttributes ParseRoiAlignAttributes(const ir::Node& node) {
  RoiAlignAttributes a;
  a.output_height = node.GetInt("output_height", 1);
  a.output_width = node.GetInt("output_width", 1);
  a.sampling_ratio = node.GetInt("sampling_ratio", 0);
  a.spatial_scale = node.GetFloat("spatial_scale", 1.0f);
  const std::string mode = node.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
  a.max = mode == "max";
  const std::string coord =
      node.opset() >= 16 ? node.GetString("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (coord != "half_pixel" && coord != "output_half_pixel") {
    throw InvalidModelError(node.Describe() + ": unsupported coordinate_transformation_mode '" + coord + "'");
  }
  a.half_pixel = coord == "half_pixel";
  if (a.output_height <= 0 || a.output_width <= 0 || a.sampling_ratio < 0) {
    throw InvalidModelError(node.Describe() + ": output_height/output_width must be > 0 and sampling_ratio >= 0");
  }
  return a;
}

Shape CheckRoiAlignInputs(const PrepareContext& ctx, const RoiAlignAttributes& attrs) {
  const std::string what = ctx.Describe();
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& rois = ctx.tensor_input(1);
  const InputSpec& batch = ctx.tensor_input(2);
  if (x.shape.size() != 4)
    throw InvalidArgumentError(what + ": input 'X' must be 4-D NCHW, got " + ShapeToString(x.shape));
  if (rois.shape.size() != 2 || rois.shape[1] != 4) {
    throw InvalidArgumentError(what + ": input 'rois' must have shape [num_rois, 4], got " +
                               ShapeToString(rois.shape));
  }
  if (rois.dtype != x.dtype) {
    throw InvalidArgumentError(what + ": 'rois' must have the element type of 'X' (" + ctx.InputString(1) + ", " +
                               ctx.InputString(0) + ")");
  }
  const int64_t num_rois = rois.shape[0];
  if (batch.dtype != DataType::kInt64 && batch.dtype != DataType::kInt32) {
    throw InvalidArgumentError(what + ": input 'batch_indices': expected an int32 or int64 tensor, got " +
                               std::string(DataTypeName(batch.dtype)));
  }
  if (batch.shape.size() != 1 || batch.shape[0] != num_rois) {
    throw InvalidArgumentError(what + ": input 'batch_indices' must have shape [" + std::to_string(num_rois) +
                               "], got " + ShapeToString(batch.shape));
  }
  const int64_t channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  if (num_rois > 0 && channels > 0 && (height == 0 || width == 0)) {
    throw InvalidArgumentError(what + ": input 'X' has an empty spatial extent " + ShapeToString(x.shape));
  }
  return {num_rois, channels, attrs.output_height, attrs.output_width};
}

std::vector<int64_t> RoiAlignBatchIndices(const KernelContext& ctx, int64_t num_rois, int64_t n) {
  const Tensor& batch = ctx.required_input(2);
  std::vector<int64_t> batch_idx(static_cast<size_t>(num_rois));
  for (int64_t r = 0; r < num_rois; ++r) {
    const int64_t b = IndexAt(batch, r);  // int32 or int64: Prepare checked
    if (b < 0 || b >= n) {
      throw InvalidArgumentError(ctx.Describe() + ": batch index " + std::to_string(b) + " is out of range [0, " +
                                 std::to_string(n) + ")");
    }
    batch_idx[static_cast<size_t>(r)] = b;
  }
  return batch_idx;
}

void PlanRoiAlignSamples(const RoiAlignAttributes& attrs, const double roi[4], int64_t height, int64_t width,
                         RoiAlignSamples& out) {
  const int64_t ph_n = attrs.output_height, pw_n = attrs.output_width;
  const double offset = attrs.half_pixel ? 0.5 : 0.0;
  const double start_w = roi[0] * attrs.spatial_scale - offset, start_h = roi[1] * attrs.spatial_scale - offset;
  const double end_w = roi[2] * attrs.spatial_scale - offset, end_h = roi[3] * attrs.spatial_scale - offset;
  double roi_w = end_w - start_w, roi_h = end_h - start_h;
  if (!attrs.half_pixel) {  // force malformed rois to 1x1
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double bin_h = roi_h / static_cast<double>(ph_n), bin_w = roi_w / static_cast<double>(pw_n);
  auto grid = [&](double extent, int64_t bins) -> int64_t {
    if (attrs.sampling_ratio > 0) return attrs.sampling_ratio;
    const double g = std::ceil(extent / static_cast<double>(bins));
    return g > 0 && g < 1e6 ? static_cast<int64_t>(g) : 0;  // NaN / negative rois sample nothing
  };
  const int64_t gh = grid(roi_h, ph_n), gw = grid(roi_w, pw_n);
  out.per_bin = gh * gw;
  out.count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
  out.samples.clear();
  for (int64_t ph = 0; ph < ph_n; ++ph) {
    for (int64_t pw = 0; pw < pw_n; ++pw) {
      for (int64_t iy = 0; iy < gh; ++iy) {
        const double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(gh);
        for (int64_t ix = 0; ix < gw; ++ix) {
          const double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(gw);
          out.samples.push_back(BilinearSample(yy, xx, height, width));
        }
      }
    }
  }
}

void RegisterRoiAlignKernels(KernelRegistry& r) {
  const std::vector<DataType> t1 = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const std::vector<DataType> t2 = {DataType::kInt64};
  r.Add(
      {.op = "RoiAlign", .since = 10, .until = 15, .types = {{"T1", t1}, {"T2", t2}}, .create = MakeKernel<RoiAlign>});
  r.Add(
      {.op = "RoiAlign", .since = 16, .until = 21, .types = {{"T1", t1}, {"T2", t2}}, .create = MakeKernel<RoiAlign>});
  r.Add({.op = "RoiAlign",
         .since = 22,
         .types = {{"T1", dtypes::Concat(t1, {DataType::kBFloat16})}, {"T2", t2}},
         .create = MakeKernel<RoiAlign>});
}

}  // namespace ferry::ref
