// Resize (opsets 10, 11, 13, 18, 19): nearest / linear / cubic interpolation over any axes.
//   10: inputs (X, scales); asymmetric coordinates, nearest rounds like ONNX Runtime's "simple" mode.
//   11: inputs (X, roi, scales, sizes); coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
//       exclude_outside, extrapolation_value (tf_half_pixel_for_nn exists only here).
//   13: roi and scales become optional.   18: antialias, axes, keep_aspect_ratio_policy.
//   19: coordinate_transformation_mode half_pixel_symmetric.
// With scales, output = floor(input * scale) (computed in double, as the ONNX reference does; roi does not
// change the output size, as in the reference and ONNX Runtime); with sizes, scale = output / input, or with
// keep_aspect_ratio_policy one scale for all listed axes and output = round_half_up(input * scale).
// Element types: nearest copies any; linear and cubic interpolate numbers and complex numbers (real and imaginary
// parts with the same weights), and are refused for bool and string.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/resize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Reads a float16/float/double tensor (scales, roi) into doubles.
std::vector<double> ReadDoubles(const Tensor& t, const std::string& what) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), what, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.size(); ++i)
      out[static_cast<size_t>(i)] = static_cast<double>(static_cast<Acc<T>>(t.data<T>()[i]));
  });
  return out;
}

class Resize : public OpKernel {
 public:
  explicit Resize(const ir::Node& node) : opset_(node.opset()) {
    const std::string mode = node.GetString("mode", "nearest");
    if (mode == "bilinear" || mode == "bicubic" || !ParseResizeMode(mode, &params_.mode) ||
        (opset_ < 11 && params_.mode == ResizeParams::Mode::kCubic)) {
      throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
    }
    if (opset_ < 11) {
      params_.coord = ResizeParams::Coord::kAsymmetric;
      params_.nearest = ResizeParams::NearestMode::kSimple;
    } else {
      const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
      if (!ParseResizeCoord(coord, &params_.coord) ||
          (params_.coord == ResizeParams::Coord::kTfHalfPixelForNN && opset_ >= 13) ||
          (params_.coord == ResizeParams::Coord::kHalfPixelSymmetric && opset_ < 19)) {
        throw InvalidModelError(node.Describe() + ": unsupported coordinate_transformation_mode '" + coord + "'");
      }
      const std::string nearest = node.GetString("nearest_mode", "round_prefer_floor");
      if (!ParseNearestMode(nearest, &params_.nearest)) {
        throw InvalidModelError(node.Describe() + ": unsupported nearest_mode '" + nearest + "'");
      }
      params_.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
      params_.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
      params_.extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
    }
    if (opset_ >= 18) {
      params_.antialias = node.GetInt("antialias", 0) != 0;
      axes_ = node.GetInts("axes");
      const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
      if (policy == "stretch") {
        policy_ = AspectPolicy::kStretch;
      } else if (policy == "not_larger") {
        policy_ = AspectPolicy::kNotLarger;
      } else if (policy == "not_smaller") {
        policy_ = AspectPolicy::kNotSmaller;
      } else {
        throw InvalidModelError(node.Describe() + ": unsupported keep_aspect_ratio_policy '" + policy + "'");
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    const Tensor* roi_t = opset_ >= 11 ? ctx.input(1) : nullptr;
    const Tensor* scales_t = ctx.input(opset_ >= 11 ? 2 : 1);
    const Tensor* sizes_t = opset_ >= 11 ? ctx.input(3) : nullptr;
    const bool has_scales = scales_t && scales_t->size() > 0;
    const bool has_sizes = sizes_t && sizes_t->size() > 0;
    if (has_scales == has_sizes) {
      throw InvalidArgumentError(what + ": exactly one of 'scales' and 'sizes' must be given (non-empty)");
    }

    // The axes the scales/sizes/roi entries refer to.
    std::vector<int64_t> axes;
    if (axes_.empty()) {
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    } else {
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (int64_t a : axes_) {
        const int64_t n = NormalizeAxis(a, rank, what);
        if (seen[static_cast<size_t>(n)]) {
          throw InvalidArgumentError(what + ": attribute 'axes' lists axis " + std::to_string(a) + " twice");
        }
        seen[static_cast<size_t>(n)] = true;
        axes.push_back(n);
      }
    }
    const size_t naxes = axes.size();

    std::vector<double> scales(static_cast<size_t>(rank), 1.0);
    Shape out_shape = x.shape();
    if (has_scales) {
      std::vector<double> s = ReadDoubles(*scales_t, what + ": input 'scales'");
      if (s.size() != naxes) {
        throw InvalidArgumentError(what + ": input 'scales' has " + std::to_string(s.size()) + " values, expected " +
                                   std::to_string(naxes) + " for input shape " + ShapeToString(x.shape()));
      }
      for (size_t i = 0; i < naxes; ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        if (!(s[i] > 0) || !std::isfinite(s[i])) {
          throw InvalidArgumentError(what + ": input 'scales' must be positive, got " + std::to_string(s[i]));
        }
        scales[a] = s[i];
        const double len = std::floor(s[i] * static_cast<double>(x.dim(axes[i])));
        if (len >= 9.0e18) throw InvalidArgumentError(what + ": input 'scales' gives an output dim too large");
        out_shape[a] = static_cast<int64_t>(len);
      }
    } else {
      std::vector<int64_t> sz = ReadInt64s(*sizes_t, what + ": input 'sizes'");
      if (sz.size() != naxes) {
        throw InvalidArgumentError(what + ": input 'sizes' has " + std::to_string(sz.size()) + " values, expected " +
                                   std::to_string(naxes) + " for input shape " + ShapeToString(x.shape()));
      }
      for (size_t i = 0; i < naxes; ++i) {
        if (sz[i] < 0) throw InvalidArgumentError(what + ": input 'sizes' has a negative value");
        const size_t a = static_cast<size_t>(axes[i]);
        const int64_t in = x.dim(axes[i]);
        if (in == 0 && sz[i] != 0) {
          throw InvalidArgumentError(what + ": cannot resize the empty dim " + std::to_string(axes[i]) + " of " +
                                     ShapeToString(x.shape()) + " to " + std::to_string(sz[i]));
        }
        scales[a] = in == 0 ? 1.0 : static_cast<double>(sz[i]) / static_cast<double>(in);
        out_shape[a] = sz[i];
      }
      if (policy_ != AspectPolicy::kStretch) {
        double s = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t a : axes) {
          const double v = scales[static_cast<size_t>(a)];
          s = policy_ == AspectPolicy::kNotLarger ? std::min(s, v) : std::max(s, v);
        }
        for (int64_t a : axes) {
          scales[static_cast<size_t>(a)] = s;
          out_shape[static_cast<size_t>(a)] = static_cast<int64_t>(s * static_cast<double>(x.dim(a)) + 0.5);
        }
      }
    }

    std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
    if (params_.coord == ResizeParams::Coord::kTfCropAndResize && roi_t && roi_t->size() > 0) {
      std::vector<double> roi = ReadDoubles(*roi_t, what + ": input 'roi'");
      if (roi.size() != 2 * naxes) {
        throw InvalidArgumentError(what + ": input 'roi' has " + std::to_string(roi.size()) + " values, expected " +
                                   std::to_string(2 * naxes));
      }
      for (size_t i = 0; i < naxes; ++i) {
        roi_start[static_cast<size_t>(axes[i])] = roi[i];
        roi_end[static_cast<size_t>(axes[i])] = roi[naxes + i];
      }
    }

    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    ResizeTensor(x, y, scales, roi_start, roi_end, params_, ctx.threads(), what);
  }

 private:
  int64_t opset_;
  ResizeParams params_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
};

std::string ResizePredicate(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  return ResizeModeReason("Resize", node.GetString("mode", "nearest"),
                          x && x->type().is_tensor() ? x->type().elem_type : DataType::kUndefined);
}

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  const auto t1 = dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                      DataType::kComplex128});
  const char* constraints = "bool and string input only with mode=nearest";
  const std::vector<DataType> t2 = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Resize",
         .since = 10,
         .until = 10,
         .types = {{"T", t1}},
         .create = MakeKernel<Resize>,
         .predicate = ResizePredicate,
         .host_inputs = {1},
         .constraints = constraints});
  const int versions[] = {11, 13, 18, 19};
  for (int i = 0; i < 4; ++i) {
    r.Add({.op = "Resize",
           .since = versions[i],
           .until = i < 3 ? versions[i + 1] - 1 : kOpsetOpen,
           .types = {{"T1", t1}, {"T2", t2}},
           .create = MakeKernel<Resize>,
           .predicate = ResizePredicate,
           .host_inputs = {1, 2, 3},
           .constraints = constraints});
  }
}

}  // namespace ferry::ref
