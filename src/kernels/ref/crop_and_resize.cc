// com.microsoft::CropAndResize (TensorFlow's crop_and_resize, as ONNX Runtime computes it): for each roi r,
// Y[r, c] is the crop of X[batch_indices[r], c] ([N, C, H, W]) to the box rois[r] = (y1, x1, y2, x2), coordinates
// normalized to [0, 1] (0 is the first row / column, 1 the last), resampled to crop_size = (crop_height,
// crop_width): output row i samples input row y1 (H - 1) + i (y2 - y1) (H - 1) / (crop_height - 1), the first and
// last rows exactly y1 (H - 1) and y2 (H - 1), a single row (y1 + y2) (H - 1) / 2; columns alike. mode "bilinear"
// (default) interpolates the four neighbours, "nearest" takes the nearest (halves rounded away from zero); the
// mode is read case-insensitively. A sample outside [0, H - 1] x [0, W - 1] is extrapolation_value (default 0).
// Y is [num_rois, C, crop_height, crop_width]; crop_size must be known before the run for Y's shape to be (else
// it is resolved by the run). float16 / bfloat16 compute through float.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class CropAndResize : public OpKernel {
 public:
  explicit CropAndResize(const ir::Node& node) : extrapolation_(node.GetFloat("extrapolation_value", 0.0f)) {
    std::string mode = node.GetString("mode", "bilinear");
    std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::tolower(c); });
    if (mode != "bilinear" && mode != "nearest") {
      throw InvalidModelError(node.Describe() + ": attribute mode = '" + node.GetString("mode", "") +
                              "', expected 'bilinear' or 'nearest'");
    }
    nearest_ = mode == "nearest";
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& rois = ctx.tensor_input(1);
    const InputSpec& idx = ctx.tensor_input(2);
    const InputSpec& crop = ctx.tensor_input(3);
    const std::string what = ctx.Describe();
    if (x.shape.size() != 4) throw InvalidArgumentError(what + ": input 'X' must be 4-D, got " + ctx.InputString(0));
    if (rois.dtype != x.dtype || rois.shape.size() != 2 || rois.shape[1] != 4) {
      throw InvalidArgumentError(what + ": input 'rois' must be [num_rois, 4] of X's type, got " + ctx.InputString(1));
    }
    if (idx.shape.size() != 1 || idx.shape[0] != rois.shape[0]) {
      throw InvalidArgumentError(what + ": input 'batch_indices' must be [" + std::to_string(rois.shape[0]) +
                                 "] (one per roi), got " + ctx.InputString(2));
    }
    if (crop.shape.size() != 1 || crop.shape[0] != 2) {
      throw InvalidArgumentError(what + ": input 'crop_size' must be [2] (crop_height, crop_width), got " +
                                 ctx.InputString(3));
    }
    if (!ctx.constant(3)) return ctx.SetOutputDynamic(0);
    ctx.SetOutput(0, x.dtype, OutputShape(x.shape, rois.shape[0], *ctx.constant(3), what));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    const Tensor& idx = ctx.required_input(2);
    const std::string what = ctx.Describe();
    const Shape shape = OutputShape(x.shape(), rois.dim(0), ctx.required_input(3), what);
    Tensor& y = ctx.Output(0, x.dtype(), shape);
    const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
    const int64_t batch = x.dim(0), ch = shape[2], cw = shape[3];
    const int32_t* bi = idx.data<int32_t>();
    for (int64_t r = 0; r < rois.dim(0); ++r) {
      if (bi[r] < 0 || bi[r] >= batch) {
        throw InvalidArgumentError(what + ": batch_indices[" + std::to_string(r) + "] = " + std::to_string(bi[r]) +
                                   " is outside [0, " + std::to_string(batch) + ")");
      }
    }
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using C = Acc<T>;  // the coordinate type (ONNX Runtime's T)
      const T* xp = x.data<T>();
      const T* rp = rois.data<T>();
      T* yp = y.data<T>();
      const T fill = static_cast<T>(static_cast<C>(extrapolation_));
      // The sampled coordinate of output position p of `pooled` along an input extent `n`.
      auto coord = [](C start, C end, int64_t p, int64_t pooled, int64_t n) -> C {
        if (pooled == 1) return static_cast<C>(0.5 * static_cast<double>(start + end) * static_cast<double>(n - 1));
        if (p == 0) return start * static_cast<C>(n - 1);
        if (p == pooled - 1) return end * static_cast<C>(n - 1);
        const C scale = (end - start) * static_cast<C>(n - 1) / static_cast<C>(pooled - 1);
        return start * static_cast<C>(n - 1) + static_cast<C>(p) * scale;
      };
      for (int64_t r = 0; r < rois.dim(0); ++r) {
        const C y1 = static_cast<C>(rp[r * 4]), x1 = static_cast<C>(rp[r * 4 + 1]);
        const C y2 = static_cast<C>(rp[r * 4 + 2]), x2 = static_cast<C>(rp[r * 4 + 3]);
        const T* image = xp + static_cast<int64_t>(bi[r]) * channels * height * width;
        T* out = yp + r * channels * ch * cw;
        for (int64_t i = 0; i < ch; ++i) {
          const C in_y = coord(y1, y2, i, ch, height);
          const bool row_out = in_y < 0 || in_y > static_cast<C>(height - 1);
          for (int64_t j = 0; j < cw; ++j) {
            const C in_x = coord(x1, x2, j, cw, width);
            T* o = out + i * cw + j;
            if (row_out || in_x < 0 || in_x > static_cast<C>(width - 1)) {
              for (int64_t c = 0; c < channels; ++c) o[c * ch * cw] = fill;
              continue;
            }
            if (nearest_) {
              const int64_t off = static_cast<int64_t>(std::round(in_y)) * width +
                                  static_cast<int64_t>(std::round(in_x));
              for (int64_t c = 0; c < channels; ++c) o[c * ch * cw] = image[c * height * width + off];
              continue;
            }
            const auto top = static_cast<int64_t>(std::floor(in_y)), bottom = static_cast<int64_t>(std::ceil(in_y));
            const auto left = static_cast<int64_t>(std::floor(in_x)), right = static_cast<int64_t>(std::ceil(in_x));
            const C ly = in_y - static_cast<C>(top), lx = in_x - static_cast<C>(left);
            for (int64_t c = 0; c < channels; ++c) {
              const T* plane = image + c * height * width;
              const C tl = static_cast<C>(plane[top * width + left]), tr = static_cast<C>(plane[top * width + right]);
              const C bl = static_cast<C>(plane[bottom * width + left]);
              const C br = static_cast<C>(plane[bottom * width + right]);
              const C t = tl + (tr - tl) * lx, b = bl + (br - bl) * lx;
              o[c * ch * cw] = static_cast<T>(t + (b - t) * ly);
            }
          }
        }
      }
    });
  }

 private:
  static Shape OutputShape(const Shape& x, int64_t num_rois, const Tensor& crop, const std::string& what) {
    const std::vector<int64_t> size = ReadInt64s(crop, what + ": input 'crop_size'");
    if (size.size() != 2 || size[0] < 0 || size[1] < 0) {
      throw InvalidArgumentError(what + ": input 'crop_size' = " + ShapeToString(size) +
                                 ", expected two sizes >= 0 (crop_height, crop_width)");
    }
    return {num_rois, x[1], size[0], size[1]};
  }

  float extrapolation_;
  bool nearest_ = false;
};

}  // namespace

void RegisterCropAndResizeKernels(KernelRegistry& r) {
  r.Add({.op = "CropAndResize",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T1", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}, {"T2", {DataType::kInt32}}},
         .create = MakeKernel<CropAndResize>,
         .host_inputs = {3}});
}

}  // namespace ferry::ref
